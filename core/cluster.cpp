#include "core/cluster.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/cluster_presets.hpp"

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

Result<Link> parse_link(const YAML::Node& node, const std::string& where) {
  auto bw = number(node, "bandwidth_gbs", 1e9, where, true);
  if (!bw) return bw.error();
  auto lat = number(node, "latency_us", 1e-6, where, false, 0);
  if (!lat) return lat.error();
  return Link{bw.value(), lat.value()};
}

std::string line_of(const YAML::Node& node, const std::string& source) {
  return source + ":" + std::to_string(node.Mark().line + 1);
}

}  // namespace

Cluster::Cluster(std::string name, std::vector<Device> devices)
    : name_(std::move(name)), devices_(std::move(devices)), links_(devices_.size() * devices_.size()) {}

std::string Cluster::summary() const {
  std::ostringstream out;
  out << name_ << " (" << size() << " devices";
  if (!devices_.empty()) out << ", " << devices_[0].kind;
  out << ")";
  return out.str();
}

Result<Cluster> Cluster::identical(int devices) {
  if (devices <= 0)
    return make_error("cluster identical:" + std::to_string(devices) + ": the device count must be at least 1");
  std::vector<Device> list;
  for (int d = 0; d < devices; ++d)
    list.push_back(Device{"dev" + std::to_string(d), "identical", 1e12, 1e12, 1e12, 1, 0});
  // Links stay at bandwidth 0 = free: benchmark graphs without communication.
  return Cluster("identical:" + std::to_string(devices), std::move(list));
}

Result<Cluster> Cluster::from_yaml(const std::string& text, const std::string& source) try {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return make_error(source + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) return make_error(source + ": a cluster file must be a YAML mapping");
  std::string name = root["name"] ? root["name"].as<std::string>() : source;
  const YAML::Node groups = root["devices"];
  if (!groups || !groups.IsSequence() || groups.size() == 0)
    return make_error(source + ": missing or empty 'devices' list (device count 0)");

  std::vector<Device> devices;
  for (const YAML::Node& group : groups) {
    const std::string where = line_of(group, source);
    auto count = number(group, "count", 1, where, false, 1);
    if (!count) return count.error();
    if (count.value() < 1 || count.value() != std::floor(count.value()))
      return make_error(where + ": 'count' must be a whole number >= 1 (device count 0)");
    auto peak = number(group, "peak_tflops", 1e12, where, true);
    auto bw = number(group, "mem_bandwidth_gbs", 1e9, where, true);
    auto mem = number(group, "memory_gib", kGiB, where, true);
    auto streams = number(group, "streams", 1, where, false, 1);
    auto host = number(group, "host", 1, where, false, 0);
    for (auto* r : {&peak, &bw, &mem, &streams, &host})
      if (!*r) return r->error();
    if (peak.value() <= 0) return make_error(where + ": 'peak_tflops' must be > 0");
    if (streams.value() < 1) return make_error(where + ": 'streams' must be >= 1");
    std::string kind = group["kind"] ? group["kind"].as<std::string>() : "device";
    for (int i = 0; i < static_cast<int>(count.value()); ++i) {
      Device d;
      d.kind = kind;
      d.name = group["name"] ? group["name"].as<std::string>() + std::to_string(i)
                             : "gpu" + std::to_string(devices.size());
      d.peak_flops = peak.value();
      d.mem_bandwidth = bw.value();
      d.memory = mem.value();
      d.streams = static_cast<int>(streams.value());
      d.host = static_cast<int>(host.value());
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

  if (const YAML::Node links = root["links"]) {
    for (const YAML::Node& entry : links) {
      const std::string where = line_of(entry, source);
      const YAML::Node between = entry["between"];
      if (!between || !between.IsSequence() || between.size() != 2)
        return make_error(where + ": a link needs 'between: [a, b]'");
      int a = between[0].as<int>(), b = between[1].as<int>();
      if (a < 0 || a >= n || b < 0 || b >= n || a == b)
        return make_error(where + ": link between unknown devices " + std::to_string(a) + " and " +
                          std::to_string(b) + " (the cluster has " + std::to_string(n) + ")");
      auto link = parse_link(entry, where);
      if (!link) return link.error();
      cluster.set_link(a, b, link.value());
      cluster.set_link(b, a, link.value());
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
    char* end = nullptr;
    long n = std::strtol(count.c_str(), &end, 10);
    if (count.empty() || *end != '\0')
      return make_error("cluster '" + spec + "': expected identical:N with N a whole number");
    return identical(static_cast<int>(n));
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
