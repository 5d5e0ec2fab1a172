#pragma once
// Reading and writing graphs. Formats (docs/formats.md):
//   gantry JSON (.json)  - the native format, every field of OpSpec/EdgeSpec
//   DOPPLER text (.txt)  - the public DOPPLER code's compute graphs (comp,comm costs)
//   STG (.stg)           - the Standard Task Graph Set (identical processors, no communication)
// Every reader names the file, the line (or JSON path) and the problem on bad input.
#include <string>

#include "core/graph.hpp"
#include "core/result.hpp"

namespace gantry {

Result<Graph> read_graph_json(const std::string& text, const std::string& source);
Result<Graph> read_graph_doppler(const std::string& text, const std::string& source);
Result<Graph> read_graph_stg(const std::string& text, const std::string& source);

// Picks the reader from the file extension (.json, .txt, .stg).
Result<Graph> read_graph_file(const std::string& path);

std::string graph_to_json(const Graph& graph, int indent = 1);

// The DOPPLER text format (what read_graph_doppler reads, with no input nodes): every op needs an
// explicit compute cost and transfer cost (a DOPPLER file, or a workload with costs=doppler); the
// error names the first op without.
Result<std::string> graph_to_doppler(const Graph& graph);

}  // namespace gantry
