#pragma once
// What a policy knows of a graph before it places anything, computed once per (graph, costs):
// node features, edge features, the teacher's priorities and each op's critical path. Times come
// from the cost table (the mean over devices), so one policy serves physical and DOPPLER costs,
// and a graph's features are scale-free: every time is divided by the graph's mean op time.
#include <cstdint>
#include <vector>

#include "core/cost_model.hpp"
#include "core/graph.hpp"
#include "learner/policy_config.hpp"

namespace gantry {

struct GraphFeatures {
  int ops = 0;
  int devices = 0;
  double unit = 1;  // mean op time: the time unit of every feature

  // [ops x kNodeFeatures], row-major: log1p(time / unit) of compute, bottom level, top level,
  // summed input transfers and summed output transfers, each column then z-scored over the ops.
  std::vector<float> node;
  // Per edge (Graph edge id): log1p(mean transfer time / unit).
  std::vector<float> edge;
  // The critical-path teacher's priority (upward rank, as tuner/graph_levels.hpp) in graph time.
  std::vector<double> bottom_level;
  // Each op's next op on its longest path to a sink / previous op on its longest path from a
  // source (-1 at the end), and the number of ops on those paths, the op included.
  std::vector<OpId> bottom_next, top_prev;
  std::vector<int> bottom_length, top_length;
};

GraphFeatures compute_graph_features(const Graph& graph, const CostTable& costs);

// Signed log1p(x / unit): the squashing every time feature goes through.
float scaled_time(double x, double unit);

}  // namespace gantry
