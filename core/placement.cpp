#include "core/placement.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "core/fingerprint.hpp"
#include "core/graph.hpp"
#include "core/json_util.hpp"

namespace gantry {

Status Placement::check(const Graph& graph, int devices, const std::string& source) const {
  if (size() != graph.size())
    return make_error(source + ": " + std::to_string(size()) + " entries for a graph of " + std::to_string(graph.size()) + " ops");
  for (OpId op = 0; op < size(); ++op)
    if (device[op] < 0 || device[op] >= devices)
      return make_error(source + ": op " + std::to_string(op) + " (" + graph.name(op) + ") is on device " +
                        std::to_string(device[op]) + ", but the cluster has devices 0.." + std::to_string(devices - 1));
  if (!has_priority()) return Ok{};
  if (static_cast<int>(priority.size()) != graph.size())
    return make_error(source + ": " + std::to_string(priority.size()) + " priorities for a graph of " +
                      std::to_string(graph.size()) + " ops");
  for (OpId op = 0; op < size(); ++op)
    if (!std::isfinite(priority[op]))
      return make_error(source + ": op " + std::to_string(op) + " (" + graph.name(op) + ") has a priority that is not a finite number");
  return Ok{};
}

Status Placement::check(const Graph& graph, const Cluster& cluster, const std::string& source) const {
  return check(graph, cluster.size(), source);
}

std::string placement_to_json(const Placement& placement, const std::string& graph_fingerprint,
                              const std::string& cluster_name, int indent) {
  nlohmann::json j;
  j["format"] = "gantry-placement";
  j["version"] = 1;
  if (!graph_fingerprint.empty()) j["graph_fingerprint"] = graph_fingerprint;
  if (!cluster_name.empty()) j["cluster"] = cluster_name;
  j["placement"] = placement.device;
  if (placement.has_priority()) j["priority"] = placement.priority;
  return j.dump(indent);
}

Result<PlacementFile> placement_from_json(const std::string& text, const std::string& source) {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = parsed.value();
  // Accept both a placement file and the `-f json` output of `gantry place` (same keys).
  if (!j.is_object() || !j.contains("placement") || !j["placement"].is_array())
    return make_error(source + ": expected a JSON object with a 'placement' array (op index -> device index)");
  if (Status ok = check_format_and_version(j, "gantry-placement", source + ": $"); !ok) return ok.error();
  PlacementFile file;
  Placement& p = file.placement;
  for (std::size_t i = 0; i < j["placement"].size(); ++i) {
    const auto& v = j["placement"][i];
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= kMaxDevices)
      return make_error(source + ": $.placement[" + std::to_string(i) + "]: " + v.dump() +
                        " is not a device index (a whole number from 0 to " + std::to_string(kMaxDevices - 1) + ")");
    p.device.push_back(static_cast<std::int32_t>(v.get<long long>()));
  }
  if (j.contains("priority")) {
    if (!j["priority"].is_array()) return make_error(source + ": $.priority is not an array");
    for (std::size_t i = 0; i < j["priority"].size(); ++i) {
      const auto& v = j["priority"][i];
      if (!v.is_number()) return make_error(source + ": $.priority[" + std::to_string(i) + "] is not a number");
      p.priority.push_back(v.get<double>());
    }
  }
  // `query export` wrote the fingerprint as "graph" before; there "graph" may also be a label.
  if (j.contains("graph_fingerprint")) {
    Fingerprint fp;
    if (!j["graph_fingerprint"].is_string() || !Fingerprint::from_hex(j["graph_fingerprint"].get<std::string>(), fp))
      return make_error(source + ": $.graph_fingerprint: " + j["graph_fingerprint"].dump() +
                        " is not a graph fingerprint (32 hex digits)");
    file.graph_fingerprint = fp.hex();
  } else if (j.contains("graph") && j["graph"].is_string()) {
    Fingerprint fp;
    if (Fingerprint::from_hex(j["graph"].get<std::string>(), fp)) file.graph_fingerprint = fp.hex();
  }
  return file;
}

Result<PlacementFile> read_placement_file(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return placement_from_json(text.value(), path);
}

}  // namespace gantry
