#include "learner/graph_features.hpp"

#include <algorithm>
#include <cmath>

#include "tuner/graph_levels.hpp"

namespace gantry {

float scaled_time(double x, double unit) {
  const double v = std::log1p(std::fabs(x) / unit);
  return static_cast<float>(x < 0 ? -v : v);
}

namespace {

// z-score one column of a row-major [rows x cols] matrix (population std; a constant column -> 0).
void standardize_column(std::vector<float>& m, int rows, int cols, int c) {
  double mean = 0, var = 0;
  for (int r = 0; r < rows; ++r) mean += m[r * cols + c];
  mean /= rows;
  for (int r = 0; r < rows; ++r) var += (m[r * cols + c] - mean) * (m[r * cols + c] - mean);
  const double sd = std::sqrt(var / rows) + 1e-6;
  for (int r = 0; r < rows; ++r) m[r * cols + c] = static_cast<float>((m[r * cols + c] - mean) / sd);
}

}  // namespace

GraphFeatures compute_graph_features(const Graph& g, const CostTable& costs) {
  GraphFeatures f;
  const int n = g.size();
  f.ops = n;
  f.devices = costs.num_devices();
  double total = 0;
  for (OpId op = 0; op < n; ++op) total += costs.mean_op_time(op);
  f.unit = total > 0 ? total / n : 1.0;

  std::vector<double> transfer(g.num_edges());
  f.edge.resize(g.num_edges());
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    transfer[e] = costs.mean_transfer_time(e);
    f.edge[e] = scaled_time(transfer[e], f.unit);
  }

  f.bottom_level = upward_ranks(g, costs);
  f.bottom_next.assign(n, -1);
  f.bottom_length.assign(n, 1);
  const auto& topo = g.topo_order();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const OpId op = *it;
    double best = -1;
    for (std::size_t k = 0; k < g.succs(op).size(); ++k) {
      const OpId s = g.succs(op)[k];
      const double tail = transfer[g.out_edges(op)[k]] + f.bottom_level[s];
      if (tail > best) best = tail, f.bottom_next[op] = s;
    }
    if (f.bottom_next[op] >= 0) f.bottom_length[op] = 1 + f.bottom_length[f.bottom_next[op]];
  }

  // Top level: the longest path from a source up to the op's start (the op itself excluded).
  std::vector<double> top(n, 0.0);
  f.top_prev.assign(n, -1);
  f.top_length.assign(n, 1);
  for (OpId op : topo) {
    for (std::size_t k = 0; k < g.preds(op).size(); ++k) {
      const OpId p = g.preds(op)[k];
      const double head = top[p] + costs.mean_op_time(p) + transfer[g.in_edges(op)[k]];
      if (f.top_prev[op] < 0 || head > top[op]) top[op] = head, f.top_prev[op] = p;
    }
    if (f.top_prev[op] >= 0) f.top_length[op] = 1 + f.top_length[f.top_prev[op]];
  }

  f.node.assign(static_cast<std::size_t>(n) * kNodeFeatures, 0.0f);
  for (OpId op = 0; op < n; ++op) {
    double in = 0, out = 0;
    for (EdgeId e : g.in_edges(op)) in += transfer[e];
    for (EdgeId e : g.out_edges(op)) out += transfer[e];
    const double raw[kNodeFeatures] = {costs.mean_op_time(op), f.bottom_level[op], top[op], in, out};
    for (int c = 0; c < kNodeFeatures; ++c) f.node[op * kNodeFeatures + c] = scaled_time(raw[c], f.unit);
  }
  for (int c = 0; c < kNodeFeatures; ++c) standardize_column(f.node, n, kNodeFeatures, c);
  return f;
}

}  // namespace gantry
