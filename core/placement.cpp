#include "core/placement.hpp"

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "core/graph.hpp"
#include "core/json_util.hpp"

namespace gantry {

Status Placement::check(const Graph& graph, const Cluster& cluster, const std::string& source) const {
  if (size() != graph.size())
    return make_error(source + ": the placement has " + std::to_string(size()) + " entries but the graph has " +
                      std::to_string(graph.size()) + " ops");
  if (has_priority() && static_cast<int>(priority.size()) != graph.size())
    return make_error(source + ": 'priority' has " + std::to_string(priority.size()) + " entries, expected " +
                      std::to_string(graph.size()));
  for (int op = 0; op < size(); ++op)
    if (device[op] < 0 || device[op] >= cluster.size())
      return make_error(source + ": op " + std::to_string(op) + " is placed on device " +
                        std::to_string(device[op]) + " but cluster " + cluster.name() + " has " +
                        std::to_string(cluster.size()) + " devices");
  return Ok{};
}

std::string placement_to_json(const Placement& placement, const std::string& graph_fingerprint,
                              const std::string& cluster_name, int indent) {
  nlohmann::json j;
  j["format"] = "gantry-placement";
  j["version"] = 1;
  if (!graph_fingerprint.empty()) j["graph"] = graph_fingerprint;
  if (!cluster_name.empty()) j["cluster"] = cluster_name;
  j["placement"] = placement.device;
  if (placement.has_priority()) j["priority"] = placement.priority;
  return j.dump(indent);
}

Result<Placement> placement_from_json(const std::string& text, const std::string& source) try {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = parsed.value();
  // Accept both a placement file and the `-f json` output of `gantry place` (same key).
  if (!j.is_object() || !j.contains("placement") || !j["placement"].is_array())
    return make_error(source + ": expected a JSON object with a 'placement' array (op index -> device index)");
  Placement p;
  for (std::size_t i = 0; i < j["placement"].size(); ++i) {
    const auto& v = j["placement"][i];
    if (!v.is_number_integer())
      return make_error(source + ": placement[" + std::to_string(i) + "] is not an integer device index");
    p.device.push_back(v.get<std::int32_t>());
  }
  if (j.contains("priority")) {
    for (std::size_t i = 0; i < j["priority"].size(); ++i) {
      const auto& v = j["priority"][i];
      if (!v.is_number()) return make_error(source + ": priority[" + std::to_string(i) + "] is not a number");
      p.priority.push_back(v.get<double>());
    }
  }
  return p;
} catch (const nlohmann::json::exception& e) {
  return make_error(source + ": " + e.what());
}

Result<Placement> read_placement_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return placement_from_json(text.value(), path);
}

}  // namespace gantry
