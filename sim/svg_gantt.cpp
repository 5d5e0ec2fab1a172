#include <algorithm>
#include <cstdio>
#include <sstream>

#include "sim/timeline_export.hpp"

namespace gantry {

namespace {

const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmt(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", x);
  return buffer;
}

}  // namespace

// One row per device (compute) with a thin lane under it for incoming transfers; colour = op kind.
std::string svg_gantt(const Graph& graph, const SimResult& result, const TimelineLabels& labels) {
  const int devices = std::max<int>(1, static_cast<int>(labels.device_names.size()));
  const double width = 1200, left = 110, right = 20, top = 40, row = 34, lane = 8, gap = 10;
  const double plot = width - left - right;
  const double span = result.makespan > 0 ? result.makespan : 1;
  const double height = top + devices * (row + lane + gap) + 40;
  auto x = [&](double t) { return left + plot * t / span; };
  const bool by_group = !labels.group_of.empty();
  const int group_count = by_group ? static_cast<int>(labels.group_names.size()) : kOpKindCount;
  auto group = [&](OpId op) { return by_group ? labels.group_of[op] : static_cast<int>(graph.kind(op)); };
  auto row_y = [&](int d) { return top + d * (row + lane + gap); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << left << "\" y=\"22\" font-size=\"14\">" << escape(labels.title) << " - makespan "
      << fmt(result.makespan) << " " << escape(labels.time_unit) << "</text>\n";
  for (int d = 0; d < devices; ++d) {
    const std::string name = d < static_cast<int>(labels.device_names.size()) ? labels.device_names[d] : "dev" + std::to_string(d);
    svg << "<text x=\"8\" y=\"" << row_y(d) + row * 0.65 << "\">" << escape(name) << "</text>\n";
    svg << "<rect x=\"" << left << "\" y=\"" << row_y(d) << "\" width=\"" << plot << "\" height=\"" << row
        << "\" fill=\"#f4f4f4\"/>\n";
  }
  for (OpId op = 0; op < static_cast<OpId>(result.ops.size()); ++op) {
    const OpTiming& t = result.ops[op];
    if (t.end <= t.start) continue;
    svg << "<rect x=\"" << x(t.start) << "\" y=\"" << row_y(t.device) << "\" width=\""
        << std::max(0.5, x(t.end) - x(t.start)) << "\" height=\"" << row << "\" fill=\""
        << kPalette[group(op) % 11] << "\" stroke=\"white\" stroke-width=\"0.3\"><title>"
        << escape(graph.name(op)) << " [" << fmt(t.start) << ", " << fmt(t.end) << "]</title></rect>\n";
  }
  for (const TransferTiming& t : result.transfer_log) {
    if (t.end <= t.start) continue;
    svg << "<rect x=\"" << x(t.start) << "\" y=\"" << row_y(t.to) + row + 1 << "\" width=\""
        << std::max(0.5, x(t.end) - x(t.start)) << "\" height=\"" << lane - 2
        << "\" fill=\"#888\" opacity=\"0.6\"><title>" << escape(graph.name(t.src_op)) << " from device " << t.from
        << " [" << fmt(t.start) << ", " << fmt(t.end) << "]</title></rect>\n";
  }
  // Legend: the groups (op kinds by default) present, in their colours.
  std::vector<bool> present(group_count, false);
  for (OpId op = 0; op < static_cast<OpId>(result.ops.size()); ++op) present[group(op)] = true;
  double legend_x = width - right;
  for (int k = group_count - 1; k >= 0; --k) {
    if (!present[k]) continue;
    const std::string name = by_group ? labels.group_names[k] : to_string(static_cast<OpKind>(k));
    legend_x -= 14 + 7.0 * name.size();
    svg << "<rect x=\"" << legend_x << "\" y=\"12\" width=\"10\" height=\"10\" fill=\"" << kPalette[k % 11]
        << "\"/><text x=\"" << legend_x + 13 << "\" y=\"21\">" << name << "</text>\n";
  }
  const double axis_y = top + devices * (row + lane + gap) + 5;
  for (int tick = 0; tick <= 10; ++tick) {
    const double t = span * tick / 10;
    svg << "<line x1=\"" << x(t) << "\" x2=\"" << x(t) << "\" y1=\"" << top << "\" y2=\"" << axis_y
        << "\" stroke=\"#ccc\" stroke-width=\"0.5\"/>\n";
    svg << "<text x=\"" << x(t) << "\" y=\"" << axis_y + 14 << "\" text-anchor=\"middle\">" << fmt(t) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace gantry
