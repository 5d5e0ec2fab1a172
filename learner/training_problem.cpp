#include "learner/training_problem.hpp"

#include <vector>

#include "learner/placement_env.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

TrainingProblem training_view(std::string label, const Graph& graph, const Cluster& cluster, const CostTable& costs,
                              const SimOptions& sim) {
  TrainingProblem p;
  p.label = std::move(label);
  p.graph = &graph;
  p.cluster = &cluster;
  p.costs = &costs;
  p.sim = sim;
  p.features = compute_graph_features(graph, costs);
  return p;
}

TrainingProblem make_training_problem(std::string label, const Graph& graph, const Cluster& cluster,
                                      const CostTable& costs, const SimOptions& sim) {
  TrainingProblem p = training_view(std::move(label), graph, cluster, costs, sim);
  p.teacher_makespan = place_critical_path(PlacementProblem{graph, cluster, costs, sim}).makespan;
  return p;
}

Placement replay_placement(const TrainingProblem& problem, const Episode& episode) {
  PlacementEnv env(*problem.graph, *problem.costs, problem.features);
  std::vector<float> features(static_cast<std::size_t>(env.devices()) * kDeviceFeatures);
  std::vector<double> start(env.devices());
  for (int t = 0; t < episode.steps(); ++t) {
    env.describe(episode.ops[t], features.data(), start.data());
    env.place(episode.ops[t], episode.device[t], start[episode.device[t]]);
  }
  return env.placement();
}

}  // namespace gantry
