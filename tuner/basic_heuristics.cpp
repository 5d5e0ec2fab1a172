// The simple baselines: everything on the fastest device, round-robin in topological order, and
// the best of N uniformly random placements.
#include <algorithm>
#include <chrono>
#include <limits>
#include <random>

#include "sim/simulator.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

double evaluate_placement(const PlacementProblem& problem, const Placement& placement) {
  Simulator sim(problem.graph, problem.costs, problem.cluster, problem.sim);
  return sim.makespan(placement);
}

PlacementOutcome place_single_device(const PlacementProblem& problem) {
  const int n = problem.graph.size();
  int best = 0;
  double best_total = std::numeric_limits<double>::infinity();
  for (int d = 0; d < problem.cluster.size(); ++d) {
    double total = 0;
    for (OpId op = 0; op < n; ++op) total += problem.costs.op_time(op, d);
    if (total < best_total) {
      best_total = total;
      best = d;
    }
  }
  PlacementOutcome outcome{"single", Placement{std::vector<std::int32_t>(n, best), {}}, 0, -1, 1, 0};
  outcome.makespan = evaluate_placement(problem, outcome.placement);
  return outcome;
}

PlacementOutcome place_round_robin(const PlacementProblem& problem) {
  Placement placement;
  placement.device.assign(problem.graph.size(), 0);
  int next = 0;
  for (OpId op : problem.graph.topo_order()) {
    placement.device[op] = next;
    next = (next + 1) % problem.cluster.size();
  }
  PlacementOutcome outcome{"round-robin", placement, 0, -1, 1, 0};
  outcome.makespan = evaluate_placement(problem, outcome.placement);
  return outcome;
}

PlacementOutcome place_random(const PlacementProblem& problem, const SearchBudget& budget) {
  Simulator sim(problem.graph, problem.costs, problem.cluster, problem.sim);
  std::mt19937_64 rng(budget.seed);
  std::uniform_int_distribution<int> pick(0, problem.cluster.size() - 1);
  const int samples = std::max(1, budget.samples);
  Placement candidate, best;
  candidate.device.resize(problem.graph.size());
  double best_makespan = std::numeric_limits<double>::infinity();
  const auto begin = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return budget.seconds > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() >= budget.seconds;
  };
  int drawn = 0;
  for (int i = 0; i < samples && (i == 0 || !out_of_time()); ++i, ++drawn) {
    for (auto& d : candidate.device) d = pick(rng);
    double makespan = sim.makespan(candidate);
    if (makespan < best_makespan) {
      best_makespan = makespan;
      best = candidate;
    }
  }
  return PlacementOutcome{"random", best, best_makespan, -1, drawn, 0};
}

// Cheapest first, so that a tight budget still gets a start; on equal makespans the earlier entry
// of `preference` wins (heft, cp, round-robin, single, random).
PlacementOutcome best_heuristic(const PlacementProblem& problem, const SearchBudget& budget) {
  const auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(); };
  long evaluations = 0;
  auto exhausted = [&] {
    return (budget.evaluations > 0 && evaluations >= budget.evaluations) || (budget.seconds > 0 && elapsed() >= budget.seconds);
  };
  const std::vector<std::string> preference = {"heft", "cp", "round-robin", "single", "random"};
  auto rank = [&](const PlacementOutcome& o) {
    return std::find(preference.begin(), preference.end(), o.method) - preference.begin();
  };
  PlacementOutcome best;
  bool have = false;
  auto consider = [&](PlacementOutcome other) {
    evaluations += other.evaluations;
    if (!have || other.makespan < best.makespan || (other.makespan == best.makespan && rank(other) < rank(best))) best = std::move(other);
    have = true;
  };
  consider(place_single_device(problem));
  if (!exhausted()) consider(place_round_robin(problem));
  if (!exhausted()) consider(place_critical_path(problem));
  if (!exhausted()) consider(place_heft(problem));
  if (!exhausted()) {
    SearchBudget few = budget;
    few.samples = 50;
    if (budget.evaluations > 0) few.samples = static_cast<int>(std::min<long>(50, budget.evaluations - evaluations));
    if (budget.seconds > 0) few.seconds = budget.seconds - elapsed();
    consider(place_random(problem, few));
  }
  best.evaluations = evaluations;
  best.seconds = elapsed();
  return best;
}

}  // namespace gantry
