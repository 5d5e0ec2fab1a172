#include "core/graph_io.hpp"
#include "core/json_util.hpp"
#include "core/text.hpp"

namespace gantry {

Result<Graph> read_graph_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  if (ends_with(path, ".json")) return read_graph_json(text.value(), path);
  if (ends_with(path, ".stg")) return read_graph_stg(text.value(), path);
  if (ends_with(path, ".txt")) return read_graph_doppler(text.value(), path);
  return make_error(path + ": unknown graph format (expected .json, .txt for DOPPLER graphs, or .stg)");
}

}  // namespace gantry
