#include "core/cost_model.hpp"

#include <algorithm>
#include <limits>

namespace gantry {

namespace {

double roofline(const Graph& g, OpId op, const Device& dev, const CostModelOptions& options) {
  double compute = g.flops(op) / (dev.peak_flops * options.efficiency[static_cast<int>(g.kind(op))]);
  double memory = dev.mem_bandwidth > 0 ? g.bytes(op) / (dev.mem_bandwidth * options.memory_efficiency) : 0;
  if (g.flops(op) == 0 && g.bytes(op) == 0) return 0;  // a pure bookkeeping op costs nothing
  return std::max(compute, memory) + options.launch_overhead;
}

}  // namespace

CostTable::CostTable(const Graph& graph, const Cluster& cluster, const CostModelOptions& options,
                     const ProfileTable* profiles)
    : n_(graph.size()), d_(cluster.size()) {
  if (profiles && profiles->empty()) profiles = nullptr;
  // Map the cluster's device kinds onto the graph's explicit-cost kinds once.
  std::vector<int> kind_of_device(d_, -1);
  for (int d = 0; d < d_; ++d)
    for (std::size_t k = 0; k < graph.cost_kinds().size(); ++k)
      if (graph.cost_kinds()[k] == cluster.device(d).kind) kind_of_device[d] = static_cast<int>(k);

  // Devices that cannot differ in op time share one column (pipelines, identical:N, presets).
  bool identical = true;
  for (int d = 1; d < d_; ++d) {
    const Device &a = cluster.device(0), &b = cluster.device(d);
    identical = identical && a.kind == b.kind && a.peak_flops == b.peak_flops && a.mem_bandwidth == b.mem_bandwidth;
  }
  const int columns = identical ? 1 : d_;
  row_ = columns;
  column_ = identical ? 0 : 1;
  op_time_.resize(static_cast<std::size_t>(n_) * columns);
  mean_op_time_.resize(n_);
  min_op_time_.resize(n_);
  for (OpId op = 0; op < n_; ++op) {
    double sum = 0, best = std::numeric_limits<double>::infinity();
    const OpSignature signature = profiles ? op_signature(graph, op) : OpSignature{};
    for (int d = 0; d < columns; ++d) {
      double t;
      int k = kind_of_device[d];
      std::optional<double> measured;
      if (k >= 0 && graph.cost_for_kind(k, op) >= 0)
        t = graph.cost_for_kind(k, op);
      else if (graph.cost(op) >= 0)
        t = graph.cost(op);
      else if (profiles && (measured = profiles->op_time(cluster.device(d).kind, signature)))
        t = *measured;
      else
        t = roofline(graph, op, cluster.device(d), options);
      op_time_[static_cast<std::size_t>(op) * columns + d] = t;
      sum += t;
      best = std::min(best, t);
    }
    mean_op_time_[op] = sum / columns;
    min_op_time_[op] = best;
  }

  const int m = graph.num_edges();
  edge_fixed_.resize(m);
  edge_bytes_.resize(m);
  for (EdgeId e = 0; e < m; ++e) {
    double fixed = graph.edge_cost(e);
    if (fixed < 0) fixed = graph.transfer_cost(graph.edge_src(e));
    edge_fixed_[e] = fixed;
    edge_bytes_[e] = graph.edge_bytes(e);
  }

  if (profiles) {
    std::vector<double> co_run(d_, 1.0);
    for (int d = 0; d < d_; ++d) co_run[d] = profiles->co_run_slowdown(cluster.device(d).kind);
    if (std::any_of(co_run.begin(), co_run.end(), [](double f) { return f != 1.0; })) co_run_ = std::move(co_run);
  }

  latency_.assign(static_cast<std::size_t>(d_) * d_, 0);
  inv_bandwidth_.assign(static_cast<std::size_t>(d_) * d_, 0);
  for (int a = 0; a < d_; ++a)
    for (int b = 0; b < d_; ++b) {
      if (a == b) continue;
      const Link& link = cluster.link(a, b);
      std::size_t pair = static_cast<std::size_t>(a) * d_ + b;
      if (profiles)
        if (auto fit = profiles->link(cluster.device(a).kind, cluster.device(b).kind, cluster.path_bandwidth(a, b),
                                      std::pair{a, b});
            fit && fit->bandwidth > 0) {
          latency_[pair] = fit->latency;
          inv_bandwidth_[pair] = 1.0 / fit->bandwidth;
          continue;
        }
      const double bandwidth = cluster.path_bandwidth(a, b);  // the link or a slower port on the way
      if (bandwidth > 0) {
        latency_[pair] = link.latency;
        inv_bandwidth_[pair] = 1.0 / bandwidth;
      }
    }
}

double CostTable::mean_transfer_time(EdgeId e) const {
  if (d_ < 2) return 0;
  if (edge_fixed_[e] >= 0) return edge_fixed_[e];
  double sum = 0;
  for (int a = 0; a < d_; ++a)
    for (int b = 0; b < d_; ++b)
      if (a != b) sum += transfer_time(e, a, b);
  return sum / (static_cast<double>(d_) * (d_ - 1));
}

}  // namespace gantry
