#pragma once
// The machine a plan runs on: devices and the links between every ordered pair of them.
// Clusters come from YAML files (configs/clusters/*.yaml, also built into the binary as presets)
// or from the generic `identical:N` spec (N identical devices, free transfers).
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gantry {

struct Device {
  std::string name;
  std::string kind;          // e.g. "P100", "H100"; selects per-kind explicit op costs
  double peak_flops = 0;     // FLOP/s
  double mem_bandwidth = 0;  // bytes/s
  double memory = 0;         // bytes
  int streams = 1;           // ops that may run at once
  int host = 0;
};

struct Link {
  double bandwidth = 0;  // bytes/s; 0 means "free" (infinitely fast)
  double latency = 0;    // seconds
};

class Cluster {
 public:
  Cluster() = default;
  Cluster(std::string name, std::vector<Device> devices);

  const std::string& name() const { return name_; }
  int size() const { return static_cast<int>(devices_.size()); }
  const Device& device(int d) const { return devices_[d]; }
  const std::vector<Device>& devices() const { return devices_; }
  const Link& link(int from, int to) const { return links_[from * size() + to]; }
  void set_link(int from, int to, Link link) { links_[from * size() + to] = link; }
  std::string summary() const;
  // The cluster's content as YAML that from_yaml reads back to the same fingerprint (devices and
  // links; device names are not kept). core/cluster_yaml.cpp.
  std::string to_yaml() const;

  // `spec` is a preset name (see preset_names()), `identical:N`, or a path to a YAML file.
  static Result<Cluster> load(const std::string& spec);
  static Result<Cluster> from_yaml(const std::string& text, const std::string& source);
  static Result<Cluster> identical(int devices);
  static std::vector<std::string> preset_names();

 private:
  std::string name_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
};

}  // namespace gantry
