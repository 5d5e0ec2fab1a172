#include <nlohmann/json.hpp>

#include "sim/timeline_export.hpp"

namespace gantry {

namespace {

// Trace timestamps are microseconds; seconds map to real microseconds, abstract units 1:1.
double to_trace_us(double t, const std::string& unit) { return unit == "s" ? t * 1e6 : t; }

}  // namespace

std::string chrome_trace_json(const Graph& graph, const SimResult& result, const TimelineLabels& labels) {
  using nlohmann::json;
  json events = json::array();
  const int devices = static_cast<int>(labels.device_names.size());
  for (int d = 0; d < devices; ++d) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", d}, {"args", {{"name", labels.device_names[d]}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", d}, {"tid", 0}, {"args", {{"name", "compute"}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", d}, {"tid", 1}, {"args", {{"name", "receive"}}}});
  }
  for (OpId op = 0; op < static_cast<OpId>(result.ops.size()); ++op) {
    const OpTiming& t = result.ops[op];
    events.push_back({{"ph", "X"}, {"name", graph.name(op)}, {"cat", to_string(graph.kind(op))},
                      {"pid", t.device}, {"tid", 0}, {"ts", to_trace_us(t.start, labels.time_unit)},
                      {"dur", to_trace_us(t.end - t.start, labels.time_unit)},
                      {"args", {{"op", op}, {"start", t.start}, {"end", t.end}}}});
  }
  for (const TransferTiming& t : result.transfer_log) {
    events.push_back({{"ph", "X"}, {"name", graph.name(t.src_op) + " " + std::to_string(t.from) + "->" + std::to_string(t.to)},
                      {"cat", "transfer"}, {"pid", t.to}, {"tid", 1},
                      {"ts", to_trace_us(t.start, labels.time_unit)},
                      {"dur", to_trace_us(t.end - t.start, labels.time_unit)},
                      {"args", {{"bytes", t.bytes}, {"from", t.from}}}});
  }
  json root = {{"traceEvents", events}, {"displayTimeUnit", "ms"},
               {"otherData", {{"title", labels.title}, {"makespan", result.makespan}, {"unit", labels.time_unit}}}};
  return root.dump();
}

}  // namespace gantry
