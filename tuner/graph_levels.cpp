#include "tuner/graph_levels.hpp"

#include <algorithm>

namespace gantry {

std::vector<double> upward_ranks(const Graph& graph, const CostTable& costs) {
  std::vector<double> rank(graph.size(), 0.0);
  const auto& topo = graph.topo_order();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const OpId op = *it;
    double tail = 0;
    const Span<OpId> succs = graph.succs(op);
    const Span<EdgeId> edges = graph.out_edges(op);
    for (std::size_t k = 0; k < succs.size(); ++k)
      tail = std::max(tail, costs.mean_transfer_time(edges[k]) + rank[succs[k]]);
    rank[op] = costs.mean_op_time(op) + tail;
  }
  return rank;
}

}  // namespace gantry
