#pragma once
// How long an op takes on a device and a tensor takes on a link. An explicit cost wins (per device
// kind first, then the op's own cost); otherwise a roofline:
//   time = max(flops / (peak * efficiency(kind)), bytes / (bandwidth * memory_efficiency)) + launch
// Transfers: the edge's explicit cost, else the producer's explicit transfer cost, else
//   latency + bytes / bandwidth of the path: the link, or a slower port on the way (free when the
//   link has no bandwidth: identical:N).
// With measured profiles (core/profile_table.hpp), an op without an explicit cost whose family was
// measured on the device's kind costs the profile's time instead of the roofline, and a device
// pair whose kinds have measured transfers gets the fitted latency and bandwidth.
#include <array>
#include <vector>

#include "core/cluster.hpp"
#include "core/graph.hpp"
#include "core/profile_table.hpp"

namespace gantry {

struct CostModelOptions {
  double launch_overhead = 5e-6;  // seconds added to every roofline op time
  double memory_efficiency = 0.8;
  std::array<double, kOpKindCount> efficiency = {
      0.70,  // matmul
      0.50,  // elementwise
      0.50,  // reduce
      0.50,  // softmax
      0.55,  // attention
      0.50,  // norm
      0.50,  // embedding
      0.50,  // formation
      1.00,  // send
      1.00,  // recv
      0.50,  // custom
  };
};

// Op times for every (op, device) and link parameters for every device pair, computed once per
// graph and cluster so that the simulator's inner loop only reads arrays.
class CostTable {
 public:
  CostTable(const Graph& graph, const Cluster& cluster, const CostModelOptions& options = {},
            const ProfileTable* profiles = nullptr);
  CostTable(const Graph& graph, const Cluster& cluster, const ProfileTable* profiles)
      : CostTable(graph, cluster, CostModelOptions{}, profiles) {}

  int num_ops() const { return n_; }
  int num_devices() const { return d_; }
  // On a cluster of identical devices one time per op is stored (row_ = 1, column_ = 0).
  double op_time(OpId op, int device) const { return op_time_[static_cast<std::size_t>(op) * row_ + device * column_]; }
  // Time to ship the tensor of edge e from device `from` to device `to` (0 on the same device).
  double transfer_time(EdgeId e, int from, int to) const {
    if (from == to) return 0;
    double fixed = edge_fixed_[e];
    if (fixed >= 0) return fixed;
    std::size_t pair = static_cast<std::size_t>(from) * d_ + to;
    return latency_[pair] + edge_bytes_[e] * inv_bandwidth_[pair];
  }
  // The parts of transfer_time, for engines that lay edge data out their own way.
  double edge_fixed(EdgeId e) const { return edge_fixed_[e]; }  // < 0: none, use the link
  double latency(int from, int to) const { return latency_[static_cast<std::size_t>(from) * d_ + to]; }
  double inv_bandwidth(int from, int to) const { return inv_bandwidth_[static_cast<std::size_t>(from) * d_ + to]; }
  double edge_bytes(EdgeId e) const { return edge_bytes_[e]; }
  // Averages over devices / ordered device pairs, for heuristics that rank ops before placing.
  double mean_op_time(OpId op) const { return mean_op_time_[op]; }
  double min_op_time(OpId op) const { return min_op_time_[op]; }
  double mean_transfer_time(EdgeId e) const;
  // How much longer an op runs on `device` while another device of its host is busy (the
  // profiles' co-run slowdown of its kind; 1 without profiles), and whether any device has one.
  double co_run_slowdown(int device) const { return co_run_.empty() ? 1.0 : co_run_[device]; }
  bool has_co_run_slowdown() const { return !co_run_.empty(); }

 private:
  int n_ = 0, d_ = 0, row_ = 0, column_ = 1;
  std::vector<double> op_time_, mean_op_time_, min_op_time_;
  std::vector<double> edge_fixed_, edge_bytes_;
  std::vector<double> latency_, inv_bandwidth_;
  std::vector<double> co_run_;  // per device; empty when every factor is 1
};

}  // namespace gantry
