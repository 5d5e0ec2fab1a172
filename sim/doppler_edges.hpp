#pragma once
// Internal to the DOPPLER-compatible engine: the edge processes in the order networkx's
// MultiDiGraph.edges yields them (by source op, then destination in order of first appearance,
// parallel edges adjacent). For a repeated (src, dst) pair only the last process is waited on,
// as the public code keeps them in a dict keyed by (src, dst).
#include <vector>

#include "core/graph.hpp"

namespace gantry {

struct DopplerEdges {
  explicit DopplerEdges(const Graph& graph);

  std::vector<OpId> src, dst;
  std::vector<EdgeId> edge;
  std::vector<char> awaited;
  std::vector<int> begin;        // per op, first edge process it feeds
  std::vector<int> distinct_in;  // per op, number of distinct predecessors
};

}  // namespace gantry
