// `search`: simulated annealing on the simulator itself, standing in for the DOPPLER paper's
// enumerative optimizer. It starts from the best heuristic and proposes single-op moves, swaps of
// two ops' devices and, when the runtime honours priorities, swaps of two ops' priorities. Worse
// candidates are accepted with probability exp(-relative loss / T), T cooling geometrically over
// the budget; after a long stretch without progress the walk returns to the best placement.
#include <chrono>
#include <cmath>
#include <random>

#include "sim/simulator.hpp"
#include "tuner/graph_levels.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

namespace {

class Clock {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }

 private:
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now();
};

PlacementOutcome best_heuristic(const PlacementProblem& problem) {
  PlacementOutcome best = place_heft(problem);
  for (PlacementOutcome other : {place_critical_path(problem), place_round_robin(problem), place_single_device(problem)})
    if (other.makespan < best.makespan) best = other;
  return best;
}

}  // namespace

PlacementOutcome place_search(const PlacementProblem& problem, const SearchBudget& budget, const PlacementOutcome* start) {
  const Clock clock;
  const int n = problem.graph.size(), devices = problem.cluster.size();
  const bool with_priority = problem.sim.dispatch == Dispatch::priority;
  const PlacementOutcome seed = start ? *start : best_heuristic(problem);
  Simulator sim(problem.graph, problem.costs, problem.cluster, problem.sim);

  Placement current = seed.placement;
  if (with_priority && !current.has_priority()) current.priority = upward_ranks(problem.graph, problem.costs);
  if (!with_priority) current.priority.clear();
  double current_ms = sim.makespan(current);
  Placement best = current;
  double best_ms = current_ms;
  long evaluations = 1, since_best = 0;

  const double seconds = budget.seconds > 0 || budget.evaluations > 0 ? budget.seconds : 2.0;
  const double t_start = 0.02, t_end = 2e-4;
  double temperature = t_start;
  std::mt19937_64 rng(budget.seed);
  std::uniform_int_distribution<int> pick_op(0, n - 1);
  std::uniform_int_distribution<int> pick_device(0, std::max(0, devices - 2));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const long restart_after = std::max<long>(2000, 20L * n);

  for (;;) {
    if ((evaluations & 63) == 0) {
      double progress = 0;
      if (budget.evaluations > 0) progress = static_cast<double>(evaluations) / budget.evaluations;
      if (seconds > 0) progress = std::max(progress, clock.seconds() / seconds);
      if (progress >= 1.0) break;
      temperature = t_start * std::pow(t_end / t_start, progress);
    }
    // Propose.
    const double r = unit(rng);
    int kind, a = pick_op(rng), b = pick_op(rng);
    std::int32_t old_a = current.device[a], old_b = current.device[b];
    if (with_priority && r < 0.35) {
      kind = 2;
      std::swap(current.priority[a], current.priority[b]);
    } else if (devices > 1 && (r < 0.75 || old_a == old_b)) {
      kind = 0;
      int d = pick_device(rng);
      current.device[a] = d >= old_a ? d + 1 : d;  // any device but the current one
    } else {
      kind = 1;
      std::swap(current.device[a], current.device[b]);
    }
    const double ms = sim.makespan(current);
    ++evaluations;
    const double loss = (ms - current_ms) / current_ms;
    if (loss <= 0 || unit(rng) < std::exp(-loss / temperature)) {
      current_ms = ms;
      if (ms < best_ms) {
        best_ms = ms;
        best = current;
        since_best = 0;
        if (budget.on_improvement) budget.on_improvement(clock.seconds(), evaluations, best_ms);
        continue;
      }
    } else if (kind == 2) {
      std::swap(current.priority[a], current.priority[b]);
    } else {
      current.device[a] = old_a;
      current.device[b] = old_b;
    }
    if (++since_best > restart_after) {
      current = best;
      current_ms = best_ms;
      since_best = 0;
    }
  }
  return PlacementOutcome{"search", best, best_ms, -1, evaluations + seed.evaluations, clock.seconds()};
}

}  // namespace gantry
