// The simple baselines: everything on the fastest device, round-robin in topological order, and
// the best of N uniformly random placements.
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
  for (int i = 0; i < samples; ++i) {
    for (auto& d : candidate.device) d = pick(rng);
    double makespan = sim.makespan(candidate);
    if (makespan < best_makespan) {
      best_makespan = makespan;
      best = candidate;
    }
  }
  return PlacementOutcome{"random", best, best_makespan, -1, samples, 0};
}

PlacementOutcome best_heuristic(const PlacementProblem& problem, const SearchBudget& budget) {
  SearchBudget few = budget;
  few.samples = 50;
  PlacementOutcome best = place_heft(problem);
  long evaluations = best.evaluations;
  for (PlacementOutcome other : {place_critical_path(problem), place_round_robin(problem),
                                 place_single_device(problem), place_random(problem, few)}) {
    evaluations += other.evaluations;
    if (other.makespan < best.makespan) best = std::move(other);
  }
  best.evaluations = evaluations;
  return best;
}

}  // namespace gantry
