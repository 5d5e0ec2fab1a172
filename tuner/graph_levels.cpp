#include "tuner/graph_levels.hpp"

#include <algorithm>
#include <numeric>

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

std::vector<OpId> order_by_decreasing(const Graph& graph, const std::vector<double>& key) {
  std::vector<int> topo_index(graph.size());
  for (std::size_t i = 0; i < graph.topo_order().size(); ++i) topo_index[graph.topo_order()[i]] = static_cast<int>(i);
  std::vector<OpId> order(graph.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](OpId a, OpId b) {
    return key[a] != key[b] ? key[a] > key[b] : topo_index[a] < topo_index[b];
  });
  return order;
}

}  // namespace gantry
