#pragma once
// A DOPPLER-convention graph on N identical devices, with everything an episode needs.
#include <memory>
#include <string>

#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "learner/graph_features.hpp"
#include "learner/placement_env.hpp"
#include "learner/policy_config.hpp"
#include "sim/simulator.hpp"
#include "workloads/workload.hpp"

namespace gantry::testing {

// A policy small enough for tests that train it through the cluster (seconds, not minutes).
inline PolicyConfig tiny_policy() {
  PolicyConfig c;
  c.hidden = 8;
  c.head = 8;
  c.state = 4;
  c.steps = 1;
  return c;
}

inline SimOptions doppler_sim() {
  SimOptions o;
  o.doppler = true;
  return o;
}

struct LearnerProblem {
  Graph graph;
  Cluster cluster;
  CostTable costs;
  GraphFeatures features;
  Simulator sim;
  PlacementEnv env;

  LearnerProblem(const std::string& workload, int devices, std::uint64_t seed = 1)
      : graph(make_workload(workload, seed).value()),
        cluster(Cluster::identical(devices).value()),
        costs(graph, cluster),
        features(compute_graph_features(graph, costs)),
        sim(graph, costs, cluster, doppler_sim()),
        env(graph, costs, features) {}
  LearnerProblem(Graph g, int devices)
      : graph(std::move(g)),
        cluster(Cluster::identical(devices).value()),
        costs(graph, cluster),
        features(compute_graph_features(graph, costs)),
        sim(graph, costs, cluster, doppler_sim()),
        env(graph, costs, features) {}
};

}  // namespace gantry::testing
