// Reading clusters: YAML text (configs/clusters/*.yaml, docs/formats.md), the built-in presets and
// files by name. Apart from the rest of Cluster so that a build without yaml-cpp (the standalone
// executor, executor/standalone/) can still make clusters in code.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/cluster.hpp"
#include "core/cluster_presets.hpp"
#include "core/yaml_keys.hpp"

namespace gantry {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Reads a positive number field; `scale` converts the file's unit (TFLOP/s, GB/s, GiB, us).
Result<double> number(const YAML::Node& node, const char* key, double scale, const std::string& where,
                      bool required, double fallback = 0) {
  const YAML::Node value = node[key];
  if (!value) {
    if (required) return make_error(where + ": missing field '" + key + "'");
    return fallback;
  }
  double x = 0;
  try {
    x = value.as<double>();
  } catch (const YAML::Exception&) {
    return make_error(where + ": field '" + key + "' is not a number");
  }
  if (!std::isfinite(x) || x < 0) return make_error(where + ": field '" + key + "' must be >= 0");
  return x * scale;
}

std::optional<Error> unknown_key(const YAML::Node& node, const std::vector<std::string>& known, const std::string& where);

Result<Link> parse_link(const YAML::Node& node, const std::string& where) {
  if (auto unknown = unknown_key(node, {"between", "bandwidth_gbs", "latency_us"}, where)) return *unknown;
  auto bw = number(node, "bandwidth_gbs", 1e9, where, true);
  if (!bw) return bw.error();
  auto lat = number(node, "latency_us", 1e-6, where, false, 0);
  if (!lat) return lat.error();
  return Link{bw.value(), lat.value()};
}

std::string line_of(const YAML::Node& node, const std::string& source) {
  return source + ":" + std::to_string(node.Mark().line + 1);
}

// A whole-number field in [low, high], read without going through a narrowing cast: a count of
// 4294967297 is an error, not one device.
Result<long> whole(const YAML::Node& node, const char* key, long low, long high, const std::string& where, long fallback) {
  const YAML::Node value = node[key];
  if (!value) return fallback;
  double x = 0;
  try {
    x = value.as<double>();
  } catch (const YAML::Exception&) {
    return make_error(where + ": field '" + key + "' is not a number");
  }
  if (!std::isfinite(x) || x != std::floor(x) || x < static_cast<double>(low) || x > static_cast<double>(high))
    return make_error(where + ": field '" + key + "' must be a whole number from " + std::to_string(low) + " to " +
                      std::to_string(high) + " (got " + value.as<std::string>() + ")");
  return static_cast<long>(x);
}

Result<bool> flag(const YAML::Node& node, const std::string& key, const std::string& where, bool fallback) {
  const YAML::Node value = node[key];
  if (!value) return fallback;
  try {
    return value.as<bool>();
  } catch (const YAML::Exception&) {
    return make_error(where + ": field '" + key + "' must be true or false (got " + value.as<std::string>() + ")");
  }
}

// A text field (a name, a kind); a list or a map there is an error naming the field.
Result<std::string> text_field(const YAML::Node& node, const char* key, const std::string& where, const std::string& fallback) {
  const YAML::Node value = node[key];
  if (!value || value.IsNull()) return fallback;  // `kind:` with nothing after it: as if left out
  if (!value.IsScalar()) return make_error(where + ": field '" + key + "' must be a text, not a list or a mapping");
  return value.as<std::string>();
}

// One end of a link: a device's index, 0 to n - 1.
Result<int> device_index(const YAML::Node& end, int n, const std::string& where) {
  double x = -1;
  try {
    if (end.IsScalar()) x = end.as<double>();
  } catch (const YAML::Exception&) {  // not a number: refused below
  }
  if (!(x >= 0 && x < n && x == std::floor(x)))
    return make_error(where + ": 'between' names device '" + YAML::Dump(end) + "': devices are numbered 0 to " +
                      std::to_string(n - 1));
  return static_cast<int>(x);
}

const std::vector<std::string> kDeviceKeys = {"count",  "kind",       "name",       "peak_tflops", "mem_bandwidth_gbs",
                                              "memory_gib", "streams", "host",      "egress_gbs",  "ingress_gbs",
                                              "nic_gbs", "host_gbs", "copy_engine"};

// A misspelt field would silently fall back to a default: name it instead.
std::optional<Error> unknown_key(const YAML::Node& node, const std::vector<std::string>& known, const std::string& where) {
  if (!node.IsMap()) return Error{where + ": expected a mapping"};
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return Error{where + ": unknown field '" + key + "' (known: " + list + ")"};
    }
  }
  return std::nullopt;
}

}  // namespace

Result<Cluster> Cluster::from_yaml(const std::string& text, const std::string& source) try {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return make_error(source + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) return make_error(source + ": a cluster file must be a YAML mapping");
  if (Status once = check_unique_keys(root, source); !once) return once.error();
  if (auto unknown = unknown_key(root, {"name", "devices", "default_link", "inter_host_link", "links", "hosts"}, source))
    return *unknown;
  auto cluster_name = text_field(root, "name", source, source);
  if (!cluster_name) return cluster_name.error();
  const std::string name = cluster_name.value();
  const YAML::Node groups = root["devices"];
  if (!groups || !groups.IsSequence() || groups.size() == 0)
    return make_error(source + ": missing or empty 'devices' list (device count 0)");

  std::vector<Device> devices;
  for (const YAML::Node& group : groups) {
    const std::string where = line_of(group, source);
    if (auto unknown = unknown_key(group, kDeviceKeys, where)) return *unknown;
    auto count = whole(group, "count", 1, kMaxDevices, where, 1);
    auto peak = number(group, "peak_tflops", 1e12, where, true);
    auto bw = number(group, "mem_bandwidth_gbs", 1e9, where, true);
    auto mem = number(group, "memory_gib", kGiB, where, true);
    auto streams = whole(group, "streams", 1, kMaxStreams, where, 1);
    auto host = whole(group, "host", 0, kMaxDevices - 1, where, 0);
    auto egress = number(group, "egress_gbs", 1e9, where, false, 0);
    auto ingress = number(group, "ingress_gbs", 1e9, where, false, 0);
    auto nic = number(group, "nic_gbs", 1e9, where, false, 0);
    auto host_link = number(group, "host_gbs", 1e9, where, false, 0);
    auto copy_engine = flag(group, "copy_engine", where, true);
    if (!copy_engine) return copy_engine.error();
    for (auto* r : {&count, &streams, &host})
      if (!*r) return r->error();
    for (auto* r : {&peak, &bw, &mem, &egress, &ingress, &nic, &host_link})
      if (!*r) return r->error();
    if (peak.value() <= 0) return make_error(where + ": 'peak_tflops' must be > 0");
    if (devices.size() + static_cast<std::size_t>(count.value()) > static_cast<std::size_t>(kMaxDevices))
      return make_error(where + ": the cluster would have more than " + std::to_string(kMaxDevices) + " devices");
    auto kind = text_field(group, "kind", where, "device");
    if (!kind) return kind.error();
    auto device_name = text_field(group, "name", where, "");
    if (!device_name) return device_name.error();
    for (int i = 0; i < static_cast<int>(count.value()); ++i) {
      Device d;
      d.kind = kind.value();
      d.name = !device_name.value().empty() ? device_name.value() + std::to_string(i) : "gpu" + std::to_string(devices.size());
      d.peak_flops = peak.value();
      d.mem_bandwidth = bw.value();
      d.memory = mem.value();
      d.streams = static_cast<int>(streams.value());
      d.host = static_cast<int>(host.value());
      d.egress_bandwidth = egress.value();
      d.ingress_bandwidth = ingress.value();
      d.nic_bandwidth = nic.value();
      d.host_bandwidth = host_link.value();
      d.copy_engine = copy_engine.value();
      devices.push_back(d);
    }
  }

  Cluster cluster(name, devices);
  const int n = cluster.size();
  Link intra{}, inter{};
  if (root["default_link"]) {
    auto link = parse_link(root["default_link"], line_of(root["default_link"], source));
    if (!link) return link.error();
    intra = inter = link.value();
  }
  if (root["inter_host_link"]) {
    auto link = parse_link(root["inter_host_link"], line_of(root["inter_host_link"], source));
    if (!link) return link.error();
    inter = link.value();
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) cluster.set_link(a, b, devices[a].host == devices[b].host ? intra : inter);

  if (const YAML::Node hosts = root["hosts"]) {
    if (!hosts.IsSequence()) return make_error(line_of(hosts, source) + ": 'hosts' must be a list");
    for (const YAML::Node& entry : hosts) {
      const std::string where = line_of(entry, source);
      if (auto unknown = unknown_key(entry, {"host", "nic_gbs"}, where)) return *unknown;
      auto id = whole(entry, "host", 0, kMaxDevices - 1, where, -1);
      if (!id) return id.error();
      if (id.value() < 0 || id.value() >= cluster.num_hosts())
        return make_error(where + ": 'host' must name a host of the devices (0.." + std::to_string(cluster.num_hosts() - 1) + ")");
      auto nic = number(entry, "nic_gbs", 1e9, where, true);
      if (!nic) return nic.error();
      cluster.set_host_nic_bandwidth(static_cast<int>(id.value()), nic.value());
    }
  }

  if (const YAML::Node links = root["links"]) {
    if (!links.IsSequence()) return make_error(line_of(links, source) + ": 'links' must be a list of {between: [a, b], ...}");
    for (const YAML::Node& entry : links) {
      const std::string where = line_of(entry, source);
      const YAML::Node between = entry["between"];
      if (!between || !between.IsSequence() || between.size() != 2)
        return make_error(where + ": a link needs 'between: [a, b]'");
      auto a = device_index(between[0], n, where), b = device_index(between[1], n, where);
      if (!a) return a.error();
      if (!b) return b.error();
      if (a.value() == b.value())
        return make_error(where + ": a link joins two devices, not device " + std::to_string(a.value()) + " to itself");
      auto link = parse_link(entry, where);
      if (!link) return link.error();
      cluster.set_link(a.value(), b.value(), link.value());
      cluster.set_link(b.value(), a.value(), link.value());
    }
  }
  return cluster;
} catch (const YAML::Exception& e) {  // a value of the wrong type, e.g. `between: [a, b]`
  return make_error(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
}

std::vector<std::string> Cluster::preset_names() {
  std::vector<std::string> names;
  for (const ClusterPreset& p : cluster_presets()) names.push_back(p.name);
  names.push_back("identical:N");
  return names;
}

Result<Cluster> Cluster::load(const std::string& spec) {
  const std::string prefix = "identical:";
  if (spec.rfind(prefix, 0) == 0) {
    const std::string count = spec.substr(prefix.size());
    const bool digits = !count.empty() && count.size() <= 9 &&
                        std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
      return make_error("cluster '" + spec + "': expected identical:N with N a whole number from 1 to " +
                        std::to_string(kMaxDevices));
    return identical(std::stol(count));
  }
  for (const ClusterPreset& p : cluster_presets())
    if (spec == p.name) return from_yaml(p.yaml, std::string("preset ") + p.name);
  std::ifstream file(spec);
  if (!file) {
    std::string names;
    for (const std::string& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    return make_error("unknown cluster '" + spec + "': not a preset (" + names + ") and not a readable file");
  }
  std::stringstream text;
  text << file.rdbuf();
  return from_yaml(text.str(), spec);
}

}  // namespace gantry
