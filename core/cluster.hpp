#pragma once
// The machine a plan runs on: devices and the links between every ordered pair of them.
// Clusters come from YAML files (configs/clusters/*.yaml, also built into the binary as presets)
// or from the generic `identical:N` spec (N identical devices, free transfers).
//
// Besides its link, a transfer between two devices passes through shared ports: the sender's
// egress and the receiver's ingress port and, between hosts, both devices' NICs and both hosts'
// NICs. A port with bandwidth 0 is not a limit. The simulator lets concurrent transfers share a
// port (sim/simulator.cpp), so one device cannot send to N peers at N times its port bandwidth.
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
  double egress_bandwidth = 0;   // bytes/s out of the device, all traffic (0: not a limit)
  double ingress_bandwidth = 0;  // bytes/s into the device, all traffic (0: not a limit)
  double nic_bandwidth = 0;      // bytes/s each way through the device's own NIC, to other hosts
  // bytes/s each way between the device and its host's memory (PCIe; 0: unknown), what activation
  // offload copies over (core/host_offload.hpp)
  double host_bandwidth = 0;
  // true: copies to other devices overlap with compute (DMA copy engines). false: the device makes
  // its outputs' copies itself, one after another, right after computing them, on the stream that
  // computed them (which runs nothing meanwhile). A CPU core has no copy engine: a copy thread
  // beside the device threads of a busy host takes time from one of them (docs/architecture.md,
  // "Copies without a copy engine").
  bool copy_engine = true;
};

// Limits on cluster sizes, checked when a cluster is read: link tables grow with devices^2.
constexpr int kMaxDevices = 1024;
constexpr int kMaxStreams = 1024;

// One shared port a transfer passes through, and its bandwidth (bytes/s, > 0).
struct PortUse {
  int port = 0;  // 0 .. Cluster::num_ports() - 1
  double bandwidth = 0;
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
  int num_hosts() const { return static_cast<int>(host_nic_.size()); }
  // Bandwidth of a host's NIC each way, shared by its devices' traffic to other hosts (0: none).
  double host_nic_bandwidth(int host) const { return host_nic_[host]; }
  void set_host_nic_bandwidth(int host, double bandwidth) { host_nic_[host] = bandwidth; }

  // The ports a transfer from `from` to `to` passes through (only those with a bandwidth), and the
  // bandwidth of the whole path: min(link, ports), 0 when the link is free (no cost, no ports).
  std::vector<PortUse> ports_on_path(int from, int to) const;
  double path_bandwidth(int from, int to) const;
  int num_ports() const { return 4 * size() + 2 * num_hosts(); }
  std::string summary() const;
  // The cluster's content as YAML that from_yaml reads back to the same fingerprint (devices and
  // links; device names are not kept). core/cluster_yaml.cpp.
  std::string to_yaml() const;

  // `spec` is a preset name (see preset_names()), `identical:N`, or a path to a YAML file.
  static Result<Cluster> load(const std::string& spec);
  static Result<Cluster> from_yaml(const std::string& text, const std::string& source);
  static Result<Cluster> identical(long devices);
  static std::vector<std::string> preset_names();

 private:
  std::string name_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<double> host_nic_;  // per host id 0 .. max host
};

}  // namespace gantry
