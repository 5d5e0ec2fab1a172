#include "executor/measured_timeline.hpp"

#include <algorithm>
#include <map>

namespace gantry {

namespace {

// Transfer time during which the receiving device ran nothing: the part of each transfer not
// covered by the receiver's op intervals (the simulator's exposed_transfer_time).
double exposed_time(const RunRecord& run, const std::vector<std::vector<std::pair<double, double>>>& busy) {
  double exposed = 0;
  for (const TransferRecord& t : run.transfers) {
    double covered = 0;
    for (const auto& [start, end] : busy[static_cast<std::size_t>(t.to)])
      covered += std::max(0.0, std::min(end, t.end) - std::max(start, t.start));
    exposed += std::max(0.0, (t.end - t.start) - covered);
  }
  return exposed;
}

}  // namespace

SimResult measured_timeline(const RunRecord& run, int devices) {
  SimResult r;
  r.makespan = run.makespan;
  r.busy.assign(static_cast<std::size_t>(devices), 0);
  std::vector<std::vector<std::pair<double, double>>> busy(static_cast<std::size_t>(devices));
  for (const OpRecord& op : run.ops) {
    r.ops.push_back({op.device, op.start, op.end});
    r.busy[static_cast<std::size_t>(op.device)] += op.end - op.start;
    busy[static_cast<std::size_t>(op.device)].push_back({op.start, op.end});
  }
  for (const TransferRecord& t : run.transfers) {
    r.transfer_log.push_back({t.op, t.from, t.to, t.start, t.end, t.bytes});
    ++r.transfers;
    r.transfer_bytes += t.bytes;
    r.transfer_time += t.end - t.start;
  }
  r.exposed_transfer_time = exposed_time(run, busy);
  return r;
}

}  // namespace gantry
