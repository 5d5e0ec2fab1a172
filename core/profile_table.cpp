#include "core/profile_table.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_util.hpp"

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

namespace {

struct WeightedPoint {
  double weight, x, y;
};

// A weighted least-squares line's sums, centred on the weighted means (raw sums of squares cancel
// badly), and the range of x. The points' weights must not all be zero.
struct LineSums {
  double mx = 0, my = 0, sxx = 0, sxy = 0, smallest = 0, largest = 0;
  double slope() const { return sxy / sxx; }
};

LineSums line_sums(const std::vector<WeightedPoint>& points) {
  LineSums l;
  double w = 0;
  l.smallest = l.largest = points.front().x;
  for (const WeightedPoint& p : points) {
    w += p.weight;
    l.mx += p.weight * p.x;
    l.my += p.weight * p.y;
    l.smallest = std::min(l.smallest, p.x);
    l.largest = std::max(l.largest, p.x);
  }
  l.mx /= w;
  l.my /= w;
  for (const WeightedPoint& p : points) {
    l.sxx += p.weight * (p.x - l.mx) * (p.x - l.mx);
    l.sxy += p.weight * (p.x - l.mx) * (p.y - l.my);
  }
  return l;
}

// log(time) at log(work) = x from the neighbours' (log work, log time), on a weighted least-squares
// line whose slope is clamped to [0, 1]: 1 where compute dominates (time grows with work), towards
// 0 where a fixed per-op cost does (small ops): a larger op is never faster, nor less efficient.
// Beyond the largest neighbour the line goes on with slope 1 (the efficiency there is kept, as for
// compute-bound ops), and where the neighbours' works lie within a factor of 1.6 of each other they
// cannot tell a slope: slope 1 through their mean, each contributing its time per unit of work.
double log_time_at(const std::vector<WeightedPoint>& points, double x) {
  const LineSums l = line_sums(points);
  constexpr double kLeastSpread = 0.5;  // in log work: a factor of e^0.5, about 1.6
  if (l.largest - l.smallest < kLeastSpread || !(l.sxx > 0)) return l.my + (x - l.mx);
  const double slope = std::clamp(l.slope(), 0.0, 1.0);
  if (x <= l.largest) return l.my + slope * (x - l.mx);
  return l.my + slope * (l.largest - l.mx) + (x - l.largest);
}

}  // namespace

std::optional<double> ProfileTable::op_time(const std::string& kind, const OpSignature& op) const {
  auto exact = entries_.find({kind, op.signature});
  if (exact != entries_.end()) return exact->second.seconds.mean;
  struct Near {
    double distance;
    const ProfileEntry* entry;
  };
  std::vector<Near> family;
  for (auto it = entries_.lower_bound({kind, ""}); it != entries_.end() && it->first.first == kind; ++it) {
    const ProfileEntry& e = it->second;
    if (e.op.family != op.family) continue;
    double d2 = 0;
    const std::size_t dims = std::min(e.op.features.size(), op.features.size());
    for (std::size_t i = 0; i < dims; ++i) d2 += (e.op.features[i] - op.features[i]) * (e.op.features[i] - op.features[i]);
    if (dims == 0) d2 = std::pow(std::log2(std::max(1.0, e.op.work)) - std::log2(std::max(1.0, op.work)), 2);
    family.push_back({std::sqrt(d2), &e});
  }
  if (family.empty()) return std::nullopt;
  // The nearest measured shapes, weighted by inverse squared distance.
  constexpr std::size_t kNeighbours = 3;
  const std::size_t k = std::min(kNeighbours, family.size());
  std::partial_sort(family.begin(), family.begin() + static_cast<std::ptrdiff_t>(k), family.end(),
                    [](const Near& a, const Near& b) { return a.distance < b.distance; });
  bool by_work = op.work > 0;
  for (std::size_t i = 0; i < k; ++i) by_work = by_work && family[i].entry->op.work > 0;
  std::vector<WeightedPoint> points;
  for (std::size_t i = 0; i < k; ++i) {
    const ProfileEntry& e = *family[i].entry;
    const double w = 1 / ((family[i].distance + 0.25) * (family[i].distance + 0.25));
    // A time of zero (a clock's resolution) counts as a nanosecond, so it keeps its place on the line.
    points.push_back({w, by_work ? std::log(e.op.work) : 0.0,
                      by_work ? std::log(std::max(e.seconds.mean, 1e-9)) : e.seconds.mean});
  }
  // Without work (bookkeeping ops) the times themselves are averaged.
  if (!by_work) return line_sums(points).my;
  return std::exp(log_time_at(points, std::log(op.work)));
}

std::string transfer_kind(const std::string& from_kind, const std::string& to_kind) { return from_kind + "->" + to_kind; }

std::string transfer_pair_kind(const std::string& from_kind, const std::string& to_kind, int from, int to) {
  return transfer_kind(from_kind, to_kind) + "@" + std::to_string(from) + "-" + std::to_string(to);
}

std::optional<LinkFit> ProfileTable::link(const std::string& from_kind, const std::string& to_kind,
                                          double nominal_bandwidth, std::optional<std::pair<int, int>> devices) const {
  if (devices)
    if (auto fit = fit_link(transfer_pair_kind(from_kind, to_kind, devices->first, devices->second), nominal_bandwidth))
      return fit;
  return fit_link(transfer_kind(from_kind, to_kind), nominal_bandwidth);
}

// Weighted least squares with weights 1 / time^2: the line's relative error is what is minimised,
// so a 4 KiB transfer's microseconds count as much as a 16 MiB one's milliseconds (plain least
// squares lets the largest sizes set the intercept, often below zero).
std::optional<LinkFit> ProfileTable::fit_link(const std::string& kind, double nominal_bandwidth) const {
  std::vector<WeightedPoint> points;
  double n = 0, total_x = 0, total_y = 0;
  for (auto it = entries_.lower_bound({kind, ""}); it != entries_.end() && it->first.first == kind; ++it) {
    const double x = it->second.op.work, y = it->second.seconds.mean;
    n += 1;
    total_x += x;
    total_y += y;
    if (y > 0) points.push_back({1 / (y * y), x, y});  // a zero time would weigh nothing: left out
  }
  if (n == 0) return std::nullopt;
  if (points.size() >= 2) {
    const LineSums l = line_sums(points);
    if (l.sxx > 0 && l.largest >= 4 * std::max(l.smallest, 1.0) && l.slope() > 0)
      return LinkFit{std::max(0.0, l.my - l.slope() * l.mx), 1 / l.slope()};
  }
  if (!(nominal_bandwidth > 0)) return std::nullopt;
  return LinkFit{std::max(0.0, (total_y - total_x / nominal_bandwidth) / n), nominal_bandwidth};
}

namespace {
const OpSignature& co_run_signature() {
  static const OpSignature signature{"co-run", "co-run", 0, {}};
  return signature;
}
}  // namespace

double ProfileTable::co_run_slowdown(const std::string& kind) const {
  auto it = entries_.find({kind, co_run_signature().signature});
  return it == entries_.end() ? 1.0 : std::max(1.0, it->second.seconds.mean);
}

void ProfileTable::add_co_run_slowdown(const std::string& kind, double factor) { add(kind, co_run_signature(), factor); }

bool is_co_run_entry(const ProfileEntry& entry) { return entry.op.family == co_run_signature().family; }

std::size_t measured_signatures(const ProfileTable& table) {
  const std::vector<ProfileEntry> entries = table.entries();
  return static_cast<std::size_t>(std::count_if(entries.begin(), entries.end(), [](const ProfileEntry& e) { return !is_co_run_entry(e); }));
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

nlohmann::json profile_entry_json(const ProfileEntry& e) {
  return {{"kind", e.device_kind}, {"family", e.op.family}, {"signature", e.op.signature}, {"work", e.op.work},
          {"features", e.op.features}, {"count", e.seconds.count}, {"mean", e.seconds.mean}, {"m2", e.seconds.m2}};
}

Result<ProfileEntry> profile_entry_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return make_error(where + ": not an object");
  ProfileEntry entry;
  try {
    entry.device_kind = j.at("kind").get<std::string>();
    entry.op.family = j.at("family").get<std::string>();
    entry.op.signature = j.at("signature").get<std::string>();
    entry.op.work = j.value("work", 0.0);
    entry.op.features = j.value("features", std::vector<double>{});
    entry.seconds.count = j.at("count").get<double>();
    entry.seconds.mean = j.at("mean").get<double>();
    entry.seconds.m2 = j.value("m2", 0.0);
  } catch (const nlohmann::json::exception& ex) {
    return make_error(where + ": " + ex.what());
  }
  if (!(entry.seconds.count >= 1) || !std::isfinite(entry.seconds.mean) || entry.seconds.mean < 0)
    return make_error(where + ": count must be at least 1 and mean a non-negative number");
  return entry;
}

std::string profiles_to_json(const ProfileTable& table) {
  nlohmann::json entries = nlohmann::json::array();
  for (const ProfileEntry& e : table.entries()) entries.push_back(profile_entry_json(e));
  return nlohmann::json{{"format", "gantry-profiles"}, {"entries", entries}}.dump();
}

Result<ProfileTable> profiles_from_json(const std::string& text, const std::string& source) {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  const nlohmann::json& root = parsed.value();
  if (!root.is_object() || !root.contains("entries") || !root["entries"].is_array())
    return make_error(source + ": expected {\"format\": \"gantry-profiles\", \"entries\": [...]}");
  ProfileTable table;
  const nlohmann::json& entries = root["entries"];
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto entry = profile_entry_from_json(entries[i], source + ": $.entries[" + std::to_string(i) + "]");
    if (!entry) return entry.error();
    table.merge(entry.value());
  }
  return table;
}

}  // namespace gantry
