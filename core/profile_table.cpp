#include "core/profile_table.hpp"

#include <algorithm>
#include <cmath>

namespace gantry {

void RunningStats::add(double sample) {
  count += 1;
  const double delta = sample - mean;
  mean += delta / count;
  m2 += delta * (sample - mean);
}

void RunningStats::merge(const RunningStats& other) {
  if (other.count == 0) return;
  const double total = count + other.count, delta = other.mean - mean;
  mean += delta * other.count / total;
  m2 += other.m2 + delta * delta * count * other.count / total;
  count = total;
}

void ProfileTable::add(const std::string& device_kind, const OpSignature& op, double seconds) {
  ProfileEntry& e = entries_[{device_kind, op.signature}];
  e.device_kind = device_kind;
  e.op = op;
  e.seconds.add(seconds);
}

void ProfileTable::merge(const ProfileEntry& entry) {
  ProfileEntry& e = entries_[{entry.device_kind, entry.op.signature}];
  e.device_kind = entry.device_kind;
  e.op = entry.op;
  e.seconds.merge(entry.seconds);
}

std::vector<ProfileEntry> ProfileTable::entries() const {
  std::vector<ProfileEntry> out;
  for (const auto& [key, e] : entries_) out.push_back(e);
  return out;
}

std::optional<double> ProfileTable::op_time(const std::string& kind, const OpSignature& op) const {
  auto exact = entries_.find({kind, op.signature});
  if (exact != entries_.end()) return exact->second.seconds.mean;
  // (work, mean time) of the family's measurements on this kind, by work.
  std::vector<std::pair<double, double>> points;
  for (auto it = entries_.lower_bound({kind, ""}); it != entries_.end() && it->first.first == kind; ++it)
    if (it->second.op.family == op.family) points.push_back({it->second.op.work, it->second.seconds.mean});
  if (points.empty()) return std::nullopt;
  std::sort(points.begin(), points.end());
  if (op.work <= points.front().first) return points.front().second;
  if (op.work >= points.back().first) return points.back().second * op.work / points.back().first;
  auto upper = std::lower_bound(points.begin(), points.end(), std::pair{op.work, 0.0});
  const auto& [w1, t1] = *(upper - 1);
  const auto& [w2, t2] = *upper;
  if (w1 <= 0 || t1 <= 0 || t2 <= 0) return t1 + (t2 - t1) * (op.work - w1) / (w2 - w1);
  const double f = std::log(op.work / w1) / std::log(w2 / w1);
  return std::exp(std::log(t1) + f * std::log(t2 / t1));
}

std::optional<LinkFit> ProfileTable::link(const std::string& from_kind, const std::string& to_kind) const {
  const std::string kind = from_kind + "->" + to_kind;
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto it = entries_.lower_bound({kind, ""}); it != entries_.end() && it->first.first == kind; ++it) {
    const double x = it->second.op.work, y = it->second.seconds.mean;
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double det = n * sxx - sx * sx;
  if (n < 2 || det <= 0) return std::nullopt;
  const double slope = (n * sxy - sx * sy) / det, intercept = (sy - slope * sx) / n;
  LinkFit fit;
  fit.latency = std::max(0.0, intercept);
  fit.bandwidth = slope > 0 ? 1 / slope : 0;
  return fit;
}

Fingerprint ProfileTable::fingerprint() const {
  Hasher h;
  h.add_string("profiles-v1");
  for (const auto& [key, e] : entries_) {
    h.add_string(e.device_kind);
    h.add_string(e.op.signature);
    char mean[32];
    std::snprintf(mean, sizeof mean, "%.3g", e.seconds.mean);
    h.add_string(mean);
  }
  return h.finish();
}

}  // namespace gantry
