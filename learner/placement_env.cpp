#include "learner/placement_env.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gantry {
namespace {

bool same_time(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

PlacementEnv::PlacementEnv(const Graph& graph, const CostTable& costs, const GraphFeatures& features)
    : graph_(graph), costs_(costs), features_(features), devices_(costs.num_devices()) {
  reset();
}

void PlacementEnv::reset() {
  const int n = graph_.size();
  placed_ = 0;
  length_ = 0;
  frontier_.clear();
  candidates_.clear();
  unplaced_preds_.resize(n);
  device_.assign(n, -1);
  start_.assign(n, 0.0);
  finish_.assign(n, 0.0);
  load_.assign(devices_, 0.0);
  free_.assign(devices_, 0.0);
  ready_.assign(devices_, 0.0);
  local_.assign(devices_, 0.0);
  finish_est_.assign(devices_, 0.0);
  candidate_ready_.assign(static_cast<std::size_t>(n) * devices_, 0.0);
  for (OpId op : graph_.topo_order()) {
    unplaced_preds_[op] = static_cast<int>(graph_.preds(op).size());
    if (unplaced_preds_[op] == 0) enter_candidates(op);
  }
  refresh_window();
}

// Highest bottom level first, then the lowest id; an op without a finite level last.
std::pair<double, OpId> PlacementEnv::urgency(OpId op) const {
  const double level = features_.bottom_level[op];
  return {std::isfinite(level) ? -level : std::numeric_limits<double>::infinity(), op};
}

void PlacementEnv::refresh_window() {
  candidates_.clear();
  for (auto it = frontier_.begin(); it != frontier_.end() && static_cast<int>(candidates_.size()) < kCandidateWindow; ++it)
    candidates_.push_back(it->second);
}

// A candidate's predecessors are all placed: when its inputs can be on each device is fixed now.
void PlacementEnv::enter_candidates(OpId op) {
  frontier_.insert(urgency(op));
  double* ready = &candidate_ready_[static_cast<std::size_t>(op) * devices_];
  std::fill(ready, ready + devices_, 0.0);
  const Span<OpId> preds = graph_.preds(op);
  const Span<EdgeId> edges = graph_.in_edges(op);
  for (std::size_t k = 0; k < preds.size(); ++k)
    for (int d = 0; d < devices_; ++d)
      ready[d] = std::max(ready[d], finish_[preds[k]] + costs_.transfer_time(edges[k], device_[preds[k]], d));
}

void PlacementEnv::describe_candidates(float* features) {
  const std::size_t c = candidates_.size();
  double soonest_start = 1e300, soonest_ready = 1e300, top_level = 0;
  OpId first = graph_.size();
  std::vector<double>& start = candidate_start_;
  std::vector<double>& ready = candidate_soonest_;
  start.resize(c);
  ready.resize(c);
  for (std::size_t i = 0; i < c; ++i) {
    const double* r = &candidate_ready_[static_cast<std::size_t>(candidates_[i]) * devices_];
    double s = 1e300, q = 1e300;
    for (int d = 0; d < devices_; ++d) {
      s = std::min(s, std::max(free_[d], r[d]));
      q = std::min(q, r[d]);
    }
    start[i] = s;
    ready[i] = q;
    soonest_start = std::min(soonest_start, s);
    soonest_ready = std::min(soonest_ready, q);
    top_level = std::max(top_level, features_.bottom_level[candidates_[i]]);
    first = std::min(first, candidates_[i]);
  }
  for (std::size_t i = 0; i < c; ++i) {
    float* f = features + i * kCandidateFeatures;
    f[0] = scaled_time(start[i] - soonest_start, features_.unit);
    f[1] = scaled_time(ready[i] - soonest_ready, features_.unit);
    f[2] = scaled_time(top_level - features_.bottom_level[candidates_[i]], features_.unit);
    f[3] = static_cast<float>(std::log1p(candidates_[i] - first));
    f[4] = same_time(features_.bottom_level[candidates_[i]], top_level) ? 1.0f : 0.0f;
  }
}

void PlacementEnv::describe(OpId op, float* features, double* start) {
  std::fill(ready_.begin(), ready_.end(), 0.0);
  std::fill(local_.begin(), local_.end(), 0.0);
  const Span<OpId> preds = graph_.preds(op);
  const Span<EdgeId> edges = graph_.in_edges(op);
  for (std::size_t k = 0; k < preds.size(); ++k) {
    const OpId p = preds[k];
    local_[device_[p]] += costs_.mean_transfer_time(edges[k]);
    for (int d = 0; d < devices_; ++d)
      ready_[d] = std::max(ready_[d], finish_[p] + costs_.transfer_time(edges[k], device_[p], d));
  }
  for (int d = 0; d < devices_; ++d) {
    start[d] = std::max(free_[d], ready_[d]);
    finish_est_[d] = start[d] + costs_.op_time(op, d);
  }
  // Relative to the best device: "how much later than the best choice", and for local inputs
  // "how much less saved than the device that saves most".
  auto low = [&](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  const double load0 = low(load_), ready0 = low(ready_), free0 = low(free_), finish0 = low(finish_est_);
  const double local0 = *std::max_element(local_.begin(), local_.end());
  const double start0 = *std::min_element(start, start + devices_);
  const double unit = features_.unit;
  for (int d = 0; d < devices_; ++d) {
    float* f = features + d * kDeviceFeatures;
    f[0] = scaled_time(load_[d] - load0, unit);
    f[1] = scaled_time(local0 - local_[d], unit);
    f[2] = scaled_time(ready_[d] - ready0, unit);
    f[3] = scaled_time(free_[d] - free0, unit);
    f[4] = scaled_time(start[d] - start0, unit);
    f[5] = scaled_time(finish_est_[d] - finish0, unit);
    f[6] = static_cast<float>(d) / static_cast<float>(devices_);
    f[7] = same_time(start[d], start0) ? 1.0f : 0.0f;
  }
}

void PlacementEnv::place(OpId op, int device, double start) {
  frontier_.erase(urgency(op));

  const double end = start + costs_.op_time(op, device);
  device_[op] = device;
  start_[op] = start;
  finish_[op] = end;
  free_[device] = end;
  load_[device] += costs_.op_time(op, device);
  length_ = std::max(length_, end);
  ++placed_;
  for (OpId s : graph_.succs(op))
    if (--unplaced_preds_[s] == 0) enter_candidates(s);
  refresh_window();
}

void PlacementEnv::teacher_ops(std::vector<OpId>& out) const {
  out.clear();
  double best = -1;
  for (OpId op : candidates_) best = std::max(best, features_.bottom_level[op]);
  for (OpId op : candidates_)
    if (same_time(features_.bottom_level[op], best)) out.push_back(op);
}

void PlacementEnv::teacher_devices(const double* start, std::vector<int>& out) const {
  out.clear();
  const double best = *std::min_element(start, start + devices_);
  for (int d = 0; d < devices_; ++d)
    if (same_time(start[d], best)) out.push_back(d);
}

Placement PlacementEnv::placement() const {
  Placement p;
  p.device = device_;
  p.priority.resize(start_.size());
  for (std::size_t op = 0; op < start_.size(); ++op) p.priority[op] = -start_[op];
  return p;
}

}  // namespace gantry
