#include "core/cluster.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gantry {

Cluster::Cluster(std::string name, std::vector<Device> devices)
    : name_(std::move(name)), devices_(std::move(devices)), links_(devices_.size() * devices_.size()) {
  int hosts = 0;
  for (const Device& d : devices_) hosts = std::max(hosts, d.host + 1);
  host_nic_.assign(hosts, 0.0);
}

// Port numbering: egress 0..D-1, ingress D..2D-1, device NIC out 2D.., device NIC in 3D..,
// host NIC out 4D.., host NIC in 4D+H...
std::vector<PortUse> Cluster::ports_on_path(int from, int to) const {
  std::vector<PortUse> ports;
  if (from == to || link(from, to).bandwidth <= 0) return ports;
  const int d = size(), h = num_hosts();
  auto add = [&](int port, double bandwidth) {
    if (bandwidth > 0) ports.push_back(PortUse{port, bandwidth});
  };
  const Device& a = devices_[from];
  const Device& b = devices_[to];
  add(from, a.egress_bandwidth);
  add(d + to, b.ingress_bandwidth);
  if (a.host != b.host) {
    add(2 * d + from, a.nic_bandwidth);
    add(3 * d + to, b.nic_bandwidth);
    add(4 * d + a.host, host_nic_[a.host]);
    add(4 * d + h + b.host, host_nic_[b.host]);
  }
  return ports;
}

double Cluster::path_bandwidth(int from, int to) const {
  double bandwidth = link(from, to).bandwidth;
  if (bandwidth <= 0) return 0;
  for (const PortUse& p : ports_on_path(from, to)) bandwidth = std::min(bandwidth, p.bandwidth);
  return bandwidth;
}

std::string Cluster::summary() const {
  std::ostringstream out;
  out << name_ << " (" << size() << " devices";
  if (!devices_.empty()) out << ", " << devices_[0].kind;
  out << ")";
  return out.str();
}

Result<Cluster> Cluster::identical(long devices) {
  if (devices <= 0 || devices > kMaxDevices)
    return make_error("cluster identical:" + std::to_string(devices) + ": the device count must be between 1 and " +
                      std::to_string(kMaxDevices));
  std::vector<Device> list;
  for (int d = 0; d < devices; ++d)
    list.push_back(Device{"dev" + std::to_string(d), "identical", 1e12, 1e12, 1e12, 1, 0});
  // Links stay at bandwidth 0 = free: benchmark graphs without communication.
  return Cluster("identical:" + std::to_string(devices), std::move(list));
}

}  // namespace gantry
