#pragma once
// A graph the learner trains or places on: the graph, its cluster and costs (owned by the
// caller), how makespans are simulated, the policy's view of it and the teacher's result, which
// scales every reward (makespan / teacher makespan) so that graphs of any size train together.
#include <string>

#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/graph.hpp"
#include "core/placement.hpp"
#include "learner/episode.hpp"
#include "learner/graph_features.hpp"
#include "sim/sim_options.hpp"

namespace gantry {

struct TrainingProblem {
  std::string label;
  const Graph* graph = nullptr;
  const Cluster* cluster = nullptr;
  const CostTable* costs = nullptr;
  SimOptions sim;
  GraphFeatures features;
  double teacher_makespan = 0;    // the critical-path heuristic's, simulated under `sim`
};

// The graph as a policy sees it, without the teacher's result (placing, serving rollouts).
TrainingProblem training_view(std::string label, const Graph& graph, const Cluster& cluster, const CostTable& costs,
                              const SimOptions& sim);
// The same with the teacher's makespan, which training's rewards are scaled by.
TrainingProblem make_training_problem(std::string label, const Graph& graph, const Cluster& cluster,
                                      const CostTable& costs, const SimOptions& sim);

// The placement an episode made, with the dispatch priorities its list schedule planned (what
// the rollout simulated): the episode's actions replayed in a fresh environment.
Placement replay_placement(const TrainingProblem& problem, const Episode& episode);

}  // namespace gantry
