// Simulated annealing on the simulator itself, standing in for the DOPPLER paper's enumerative
// optimizer. Moves: one op to another device, two ops swapping devices and, when the runtime
// honours priorities, two ops swapping priorities. A worse candidate is accepted with probability
// exp(-relative loss / T), T cooling geometrically; after a long stretch without progress the walk
// returns to the best placement.
#include "tuner/local_search.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "tuner/graph_levels.hpp"

namespace gantry {

LocalSearch::LocalSearch(const PlacementProblem& problem, std::uint64_t seed)
    : problem_(problem),
      sim_(problem.graph, problem.costs, problem.cluster, problem.sim),
      rng_(seed),
      with_priority_(problem.sim.dispatch == Dispatch::priority) {}

namespace {

// Relative loss of a candidate against the current makespan; a zero makespan (a graph of free ops)
// compares absolutely instead of dividing by zero.
double relative_loss(double candidate, double current) {
  if (current > 0) return (candidate - current) / current;
  return candidate > current ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace

AnnealResult LocalSearch::run(Placement current, const std::function<double(long)>& progress, double t_start,
                              double t_end, const std::function<void(long, double)>& on_improvement,
                              long max_evaluations) {
  const int n = problem_.graph.size(), devices = problem_.cluster.size();
  if (with_priority_ && !current.has_priority()) current.priority = upward_ranks(problem_.graph, problem_.costs);
  if (!with_priority_) current.priority.clear();
  Status valid = sim_.check(current);  // once: every candidate below is a valid placement too
  if (!valid) throw std::invalid_argument("search start: " + valid.error().message);
  auto evaluate = [&] { return sim_.makespan(current.device.data(), with_priority_ ? current.priority.data() : nullptr); };

  AnnealResult result;
  double current_ms = evaluate();
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
    if (max_evaluations > 0 && result.evaluations >= max_evaluations) break;
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
    const double ms = evaluate();
    ++result.evaluations;
    sum += ms;
    const double loss = relative_loss(ms, current_ms);
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

// The budget covers the whole method: the heuristics that pick the start spend from it first
// (best_heuristic stops early when it runs out) and the annealing gets what is left.
PlacementOutcome place_search(const PlacementProblem& problem, const SearchBudget& budget, const PlacementOutcome* start) {
  const auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(); };
  const PlacementOutcome seed = start ? *start : best_heuristic(problem, budget);
  const long spent = start ? 0 : seed.evaluations;
  const double seconds = budget.seconds > 0 || budget.evaluations > 0 ? budget.seconds : 2.0;
  const long left = budget.evaluations > 0 ? budget.evaluations - spent : 0;
  if ((budget.evaluations > 0 && left <= 0) || (seconds > 0 && elapsed() >= seconds)) {
    PlacementOutcome outcome = seed;  // the heuristics used the whole budget
    outcome.method = "search";
    outcome.evaluations = spent;
    outcome.seconds = elapsed();
    return outcome;
  }
  const double search_start = elapsed();
  auto progress = [&](long evaluations) {
    double p = 0;
    if (left > 0) p = static_cast<double>(evaluations) / left;
    if (seconds > 0) p = std::max(p, (elapsed() - search_start) / (seconds - search_start));
    return p;
  };
  auto improved = [&](long evaluations, double makespan) {
    if (budget.on_improvement) budget.on_improvement(elapsed(), spent + evaluations, makespan);
  };
  LocalSearch search(problem, budget.seed);
  AnnealResult r = search.run(seed.placement, progress, 0.02, 2e-4, improved, left);
  return PlacementOutcome{"search", r.best, r.best_makespan, -1, r.evaluations + spent, elapsed()};
}

}  // namespace gantry
