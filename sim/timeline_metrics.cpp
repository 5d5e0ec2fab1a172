#include "sim/timeline_metrics.hpp"

#include <algorithm>

namespace gantry {

namespace {

using Interval = std::pair<double, double>;

// Sorted, disjoint busy intervals of one device.
std::vector<Interval> merged(std::vector<Interval> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<Interval> out;
  for (const Interval& s : spans) {
    if (!out.empty() && s.first <= out.back().second)
      out.back().second = std::max(out.back().second, s.second);
    else
      out.push_back(s);
  }
  return out;
}

double overlap(const std::vector<Interval>& busy, double begin, double end) {
  double covered = 0;
  auto it = std::lower_bound(busy.begin(), busy.end(), Interval{begin, begin},
                             [](const Interval& a, const Interval& b) { return a.second < b.first; });
  for (; it != busy.end() && it->first < end; ++it)
    covered += std::max(0.0, std::min(end, it->second) - std::max(begin, it->first));
  return covered;
}

}  // namespace

void add_timeline_metrics(SimResult& result) {
  int devices = static_cast<int>(result.busy.size());
  for (const OpTiming& op : result.ops) devices = std::max(devices, op.device + 1);
  std::vector<std::vector<Interval>> spans(devices);
  for (const OpTiming& op : result.ops)
    if (op.end > op.start) spans[op.device].emplace_back(op.start, op.end);
  for (auto& s : spans) s = merged(std::move(s));
  result.exposed_transfer_time = 0;
  for (const TransferTiming& t : result.transfer_log)
    result.exposed_transfer_time += (t.end - t.start) - overlap(spans[t.to], t.start, t.end);
}

}  // namespace gantry
