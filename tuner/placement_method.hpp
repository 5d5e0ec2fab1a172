#pragma once
// Placement methods: classic heuristics and search. Every method returns a placement plus its
// makespan as simulated under the problem's SimOptions, so methods compare on equal terms.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/graph.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"
#include "sim/sim_options.hpp"

namespace gantry {

struct PlacementProblem {
  const Graph& graph;
  const Cluster& cluster;
  const CostTable& costs;
  SimOptions sim;  // how candidates are evaluated
};

struct SearchBudget {
  double seconds = 2.0;       // wall-clock limit (0 = none)
  long evaluations = 0;       // simulator runs limit (0 = none)
  std::uint64_t seed = 1;
  int samples = 200;          // for `random`: placements drawn
  // Called on every improvement found by `search` (elapsed seconds, evaluations, makespan).
  std::function<void(double, long, double)> on_improvement;
};

struct PlacementOutcome {
  std::string method;
  Placement placement;
  double makespan = 0;        // simulated
  double planned = -1;        // the heuristic's own schedule length, where it has one
  long evaluations = 0;       // simulator runs spent
  double seconds = 0;
};

struct MethodInfo {
  std::string name;
  std::string description;
};

using PlacementFunction = std::function<PlacementOutcome(const PlacementProblem&, const SearchBudget&)>;

// The registry of placement methods, looked up by name (`place --method`, benchmarks). The
// built-in methods are registered on first use; other modules (the learner) add theirs with
// register_placement_method. A name registered twice is an error.
std::vector<MethodInfo> placement_methods();
Status register_placement_method(MethodInfo info, PlacementFunction run);
Result<PlacementOutcome> run_placement_method(const std::string& method, const PlacementProblem& problem,
                                              const SearchBudget& budget = {});

// The individual methods (also used by one another: `search` starts from the best heuristic).
PlacementOutcome place_single_device(const PlacementProblem& problem);
PlacementOutcome place_round_robin(const PlacementProblem& problem);
PlacementOutcome place_random(const PlacementProblem& problem, const SearchBudget& budget);
PlacementOutcome place_critical_path(const PlacementProblem& problem);
PlacementOutcome place_heft(const PlacementProblem& problem);
PlacementOutcome place_search(const PlacementProblem& problem, const SearchBudget& budget,
                              const PlacementOutcome* start = nullptr);

// The best of heft, cp, round-robin, single device and random (50 samples): where search starts.
// `evaluations` of the outcome counts every simulator run the heuristics spent.
PlacementOutcome best_heuristic(const PlacementProblem& problem, const SearchBudget& budget);

// Simulated makespan of a placement under the problem's options.
double evaluate_placement(const PlacementProblem& problem, const Placement& placement);

}  // namespace gantry
