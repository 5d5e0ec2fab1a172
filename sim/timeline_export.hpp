#pragma once
// A recorded simulation as a picture: a Chrome/Perfetto trace (chrome://tracing, ui.perfetto.dev)
// and a self-contained SVG Gantt chart. Both need SimOptions::record.
#include <string>
#include <vector>

#include "core/graph.hpp"
#include "sim/sim_result.hpp"

namespace gantry {

struct TimelineLabels {
  std::string title;
  std::vector<std::string> device_names;
  std::string time_unit = "s";  // the graph's cost unit
  // Optional colour groups (e.g. F / B / W of a pipeline): group index per op and group names.
  // Without them ops are coloured by kind.
  std::vector<int> group_of;
  std::vector<std::string> group_names;
};

std::string chrome_trace_json(const Graph& graph, const SimResult& result, const TimelineLabels& labels);
std::string svg_gantt(const Graph& graph, const SimResult& result, const TimelineLabels& labels);

}  // namespace gantry
