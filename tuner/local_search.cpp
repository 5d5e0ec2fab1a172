// Simulated annealing on the simulator itself, standing in for the DOPPLER paper's enumerative
// optimizer. Moves: one op to another device, two ops swapping devices and, when the runtime
// honours priorities, two ops swapping priorities. A worse candidate is accepted with probability
// exp(-relative loss / T), T cooling geometrically; after a long stretch without progress the walk
// returns to the best placement.
#include "tuner/local_search.hpp"

#include <chrono>
#include <cmath>

#include "tuner/graph_levels.hpp"

namespace gantry {

LocalSearch::LocalSearch(const PlacementProblem& problem, std::uint64_t seed)
    : problem_(problem),
      sim_(problem.graph, problem.costs, problem.cluster, problem.sim),
      rng_(seed),
      with_priority_(problem.sim.dispatch == Dispatch::priority) {}

AnnealResult LocalSearch::run(Placement current, const std::function<double(long)>& progress, double t_start,
                              double t_end, const std::function<void(long, double)>& on_improvement) {
  const int n = problem_.graph.size(), devices = problem_.cluster.size();
  if (with_priority_ && !current.has_priority()) current.priority = upward_ranks(problem_.graph, problem_.costs);
  if (!with_priority_) current.priority.clear();

  AnnealResult result;
  double current_ms = sim_.makespan(current);
  result.start_makespan = result.best_makespan = current_ms;
  result.best = current;
  result.evaluations = 1;
  double sum = current_ms;
  long since_best = 0;
  const long restart_after = std::max<long>(2000, 20L * n);
  double temperature = t_start;
  std::uniform_int_distribution<int> pick_op(0, n - 1);
  std::uniform_int_distribution<int> pick_device(0, std::max(0, devices - 2));
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  for (;;) {
    if ((result.evaluations & 31) == 1) {
      const double p = progress(result.evaluations);
      if (p >= 1.0) break;
      temperature = t_start * std::pow(t_end / t_start, std::max(0.0, p));
    }
    const double r = unit(rng_);
    const int a = pick_op(rng_), b = pick_op(rng_);
    const std::int32_t old_a = current.device[a], old_b = current.device[b];
    bool priority_move = false;
    if (with_priority_ && r < 0.35) {
      priority_move = true;
      std::swap(current.priority[a], current.priority[b]);
    } else if (devices > 1 && (r < 0.75 || old_a == old_b)) {
      const int d = pick_device(rng_);
      current.device[a] = d >= old_a ? d + 1 : d;  // any device but the current one
    } else {
      std::swap(current.device[a], current.device[b]);
    }
    const double ms = sim_.makespan(current);
    ++result.evaluations;
    sum += ms;
    const double loss = (ms - current_ms) / current_ms;
    if (loss <= 0 || unit(rng_) < std::exp(-loss / temperature)) {
      current_ms = ms;
      if (ms < result.best_makespan) {
        result.best_makespan = ms;
        result.best = current;
        since_best = 0;
        if (on_improvement) on_improvement(result.evaluations, ms);
        continue;
      }
    } else if (priority_move) {
      std::swap(current.priority[a], current.priority[b]);
    } else {
      current.device[a] = old_a;
      current.device[b] = old_b;
    }
    if (++since_best > restart_after) {
      current = result.best;
      current_ms = result.best_makespan;
      since_best = 0;
    }
  }
  result.mean_makespan = sum / result.evaluations;
  result.last = std::move(current);
  result.last_makespan = current_ms;
  return result;
}

PlacementOutcome place_search(const PlacementProblem& problem, const SearchBudget& budget, const PlacementOutcome* start) {
  const auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(); };
  const PlacementOutcome seed = start ? *start : best_heuristic(problem, budget);
  const double seconds = budget.seconds > 0 || budget.evaluations > 0 ? budget.seconds : 2.0;
  auto progress = [&](long evaluations) {
    double p = 0;
    if (budget.evaluations > 0) p = static_cast<double>(evaluations) / budget.evaluations;
    if (seconds > 0) p = std::max(p, elapsed() / seconds);
    return p;
  };
  auto improved = [&](long evaluations, double makespan) {
    if (budget.on_improvement) budget.on_improvement(elapsed(), evaluations, makespan);
  };
  LocalSearch search(problem, budget.seed);
  AnnealResult r = search.run(seed.placement, progress, 0.02, 2e-4, improved);
  return PlacementOutcome{"search", r.best, r.best_makespan, -1, r.evaluations + seed.evaluations, elapsed()};
}

}  // namespace gantry
