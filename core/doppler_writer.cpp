// Writes the DOPPLER compute-graph text format that core/doppler_reader.cpp reads: the node count,
// the (empty) list of input nodes, edge sources, edge destinations, then "comp,comm[,type]" per op.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/graph_io.hpp"

namespace gantry {

namespace {

// Shortest text that reads back to the same double (integers print as integers).
std::string number(double value) {
  char buffer[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

const char* doppler_type(OpKind kind) {
  switch (kind) {
    case OpKind::matmul: return "einsummable";
    case OpKind::formation: return "formation";
    default: return nullptr;
  }
}

}  // namespace

Result<std::string> graph_to_doppler(const Graph& graph) {
  for (OpId op = 0; op < graph.size(); ++op)
    if (graph.cost(op) < 0 || graph.transfer_cost(op) < 0)
      return make_error(graph.source() + ": op " + std::to_string(op) + " (" + graph.name(op) +
                        ") has no explicit compute and transfer cost; the DOPPLER format needs both (use a DOPPLER "
                        "file, or a workload with costs=doppler)");
  std::string out = std::to_string(graph.size()) + "\n\n";
  std::string sources, destinations;
  for (EdgeId e = 0; e < graph.num_edges(); ++e) {
    sources += std::to_string(graph.edge_src(e)) + ", ";
    destinations += std::to_string(graph.edge_dst(e)) + ", ";
  }
  out += sources + "\n" + destinations + "\n";
  for (OpId op = 0; op < graph.size(); ++op) {
    out += number(graph.cost(op)) + "," + number(graph.transfer_cost(op));
    if (const char* type = doppler_type(graph.kind(op))) out += std::string(",") + type;
    out += "\n";
  }
  return out;
}

}  // namespace gantry
