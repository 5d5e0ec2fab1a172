// Cluster -> YAML, in the form Cluster::from_yaml reads (configs/clusters/*.yaml): one line per
// field, so a new Device or Link field is one more line here and one more read there. Numbers are
// written in the file's units (TFLOP/s, GB/s, GiB, us) with the shortest decimal that converts
// back to the very same double, so the cluster's fingerprint survives the round trip.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/cluster.hpp"

namespace gantry {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A decimal y with y * scale == value exactly (as from_yaml computes it), as short as possible.
std::string scaled(double value, double scale) {
  if (value == 0) return "0";
  double y = value / scale;
  // value / scale can miss the y that maps back by an ulp or two: walk to one that maps exactly.
  for (int step = 0; step < 8 && y * scale != value; ++step) y = std::nextafter(y, y * scale < value ? INFINITY : -INFINITY);
  char buffer[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, y);
    if (std::strtod(buffer, nullptr) * scale == value) return buffer;
  }
  std::snprintf(buffer, sizeof buffer, "%.17g", y);
  return buffer;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

bool same_device(const Device& a, const Device& b) {
  return a.kind == b.kind && a.peak_flops == b.peak_flops && a.mem_bandwidth == b.mem_bandwidth &&
         a.memory == b.memory && a.streams == b.streams && a.host == b.host &&
         a.egress_bandwidth == b.egress_bandwidth && a.ingress_bandwidth == b.ingress_bandwidth &&
         a.nic_bandwidth == b.nic_bandwidth && a.host_bandwidth == b.host_bandwidth && a.copy_engine == b.copy_engine;
}

bool same_link(const Link& a, const Link& b) { return a.bandwidth == b.bandwidth && a.latency == b.latency; }

void write_link(std::ostream& out, const char* indent, const Link& link) {
  out << indent << "bandwidth_gbs: " << scaled(link.bandwidth, 1e9) << "\n";
  out << indent << "latency_us: " << scaled(link.latency, 1e-6) << "\n";
}

}  // namespace

std::string Cluster::to_yaml() const {
  std::ostringstream out;
  out << "name: " << quoted(name_) << "\n";
  out << "devices:\n";
  for (std::size_t i = 0; i < devices_.size();) {  // runs of equal devices become one group
    std::size_t j = i + 1;
    while (j < devices_.size() && same_device(devices_[i], devices_[j])) ++j;
    const Device& d = devices_[i];
    out << "  - count: " << (j - i) << "\n";
    out << "    kind: " << quoted(d.kind) << "\n";
    out << "    peak_tflops: " << scaled(d.peak_flops, 1e12) << "\n";
    out << "    mem_bandwidth_gbs: " << scaled(d.mem_bandwidth, 1e9) << "\n";
    out << "    memory_gib: " << scaled(d.memory, kGiB) << "\n";
    out << "    streams: " << d.streams << "\n";
    out << "    host: " << d.host << "\n";
    if (d.egress_bandwidth > 0) out << "    egress_gbs: " << scaled(d.egress_bandwidth, 1e9) << "\n";
    if (d.ingress_bandwidth > 0) out << "    ingress_gbs: " << scaled(d.ingress_bandwidth, 1e9) << "\n";
    if (d.nic_bandwidth > 0) out << "    nic_gbs: " << scaled(d.nic_bandwidth, 1e9) << "\n";
    if (d.host_bandwidth > 0) out << "    host_gbs: " << scaled(d.host_bandwidth, 1e9) << "\n";
    if (!d.copy_engine) out << "    copy_engine: false\n";
    i = j;
  }
  // from_yaml gives every same-host pair `default_link` and every other pair `inter_host_link`,
  // then applies `links` (both directions). The defaults are the first pair of each kind; every
  // pair that differs is listed.
  const int n = size();
  const Link* intra = nullptr;
  const Link* inter = nullptr;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const bool same_host = devices_[a].host == devices_[b].host;
      if (same_host && !intra) intra = &link(a, b);
      if (!same_host && !inter) inter = &link(a, b);
    }
  const Link none{};
  if (!intra) intra = inter ? inter : &none;
  if (!inter) inter = intra;
  out << "default_link:\n";
  write_link(out, "  ", *intra);
  out << "inter_host_link:\n";
  write_link(out, "  ", *inter);
  bool header = false;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const Link& expected = devices_[a].host == devices_[b].host ? *intra : *inter;
      if (same_link(link(a, b), expected) && same_link(link(b, a), expected)) continue;
      if (!header) out << "links:\n";
      header = true;
      // A file's link is symmetric; a cluster built in code with different directions keeps a->b.
      out << "  - between: [" << a << ", " << b << "]\n";
      write_link(out, "    ", link(a, b));
    }
  bool hosts = false;
  for (int h = 0; h < num_hosts(); ++h) {
    if (host_nic_[h] <= 0) continue;
    if (!hosts) out << "hosts:\n";
    hosts = true;
    out << "  - host: " << h << "\n";
    out << "    nic_gbs: " << scaled(host_nic_[h], 1e9) << "\n";
  }
  return out.str();
}

}  // namespace gantry
