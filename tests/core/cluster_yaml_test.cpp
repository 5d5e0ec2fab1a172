#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "core/fingerprint.hpp"

using namespace gantry;

namespace {

// Reads the writer's YAML back and compares everything the fingerprint covers, field by field
// (the fingerprint comparison alone would hide which field broke).
void check_round_trip(const Cluster& original) {
  const std::string yaml = original.to_yaml();
  auto back = Cluster::from_yaml(yaml, "written " + original.name());
  INFO(yaml);
  REQUIRE(back.ok());
  const Cluster& c = back.value();
  CHECK(c.name() == original.name());
  REQUIRE(c.size() == original.size());
  for (int d = 0; d < c.size(); ++d) {
    CHECK(c.device(d).kind == original.device(d).kind);
    CHECK(c.device(d).peak_flops == original.device(d).peak_flops);
    CHECK(c.device(d).mem_bandwidth == original.device(d).mem_bandwidth);
    CHECK(c.device(d).memory == original.device(d).memory);
    CHECK(c.device(d).streams == original.device(d).streams);
    CHECK(c.device(d).host == original.device(d).host);
    CHECK(c.device(d).egress_bandwidth == original.device(d).egress_bandwidth);
    CHECK(c.device(d).ingress_bandwidth == original.device(d).ingress_bandwidth);
    CHECK(c.device(d).nic_bandwidth == original.device(d).nic_bandwidth);
  }
  REQUIRE(c.num_hosts() == original.num_hosts());
  for (int h = 0; h < c.num_hosts(); ++h) CHECK(c.host_nic_bandwidth(h) == original.host_nic_bandwidth(h));
  for (int a = 0; a < c.size(); ++a)
    for (int b = 0; b < c.size(); ++b) {
      CHECK(c.link(a, b).bandwidth == original.link(a, b).bandwidth);
      CHECK(c.link(a, b).latency == original.link(a, b).latency);
    }
  CHECK(fingerprint(c) == fingerprint(original));
}

}  // namespace

TEST_CASE("every preset and identical:N round-trip through the YAML writer", "[core][cluster]") {
  for (const std::string& name : Cluster::preset_names()) {
    if (name == "identical:N") continue;
    INFO(name);
    auto c = Cluster::load(name);
    REQUIRE(c.ok());
    check_round_trip(c.value());
  }
  for (int n : {1, 2, 3, 16}) {
    auto c = Cluster::identical(n);
    REQUIRE(c.ok());
    check_round_trip(c.value());
  }
}

TEST_CASE("the YAML writer keeps numbers that are not round in the file's units, and odd links", "[core][cluster]") {
  // 1/3 GB/s, 0.1 + 0.2 us and 7 bytes do not survive a naive divide-and-print; a link that
  // differs from both defaults must be listed.
  std::vector<Device> devices;
  for (int d = 0; d < 4; ++d)
    devices.push_back(Device{"x" + std::to_string(d), d < 2 ? "A\"100" : "B: 1", 1e12 / 3 + d, 1e9 / 7, 7, 1 + d % 2, d / 2});
  Cluster c("odd: \"name\"", devices);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if (a != b) c.set_link(a, b, Link{1e9 / 3 * (1 + (a / 2 != b / 2)), (0.1 + 0.2) * 1e-6});
  c.set_link(0, 3, Link{123.456e9, 0.3e-6});
  c.set_link(3, 0, Link{123.456e9, 0.3e-6});
  check_round_trip(c);
  // A written cluster keeps the fingerprint a second time round (the writer is stable).
  CHECK(Cluster::from_yaml(c.to_yaml(), "x").value().to_yaml() == c.to_yaml());
}

TEST_CASE("ports and host NICs round-trip through the YAML writer", "[core][cluster]") {
  auto c = Cluster::from_yaml(
      "name: nics\ndevices:\n"
      "  - {count: 2, host: 0, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1, egress_gbs: 12.5, ingress_gbs: 7}\n"
      "  - {count: 3, host: 1, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1, nic_gbs: 0.3}\n"
      "default_link: {bandwidth_gbs: 100}\ninter_host_link: {bandwidth_gbs: 25}\n"
      "hosts:\n  - {host: 1, nic_gbs: 40}\n",
      "nics.yaml");
  REQUIRE(c.ok());
  REQUIRE(c.value().host_nic_bandwidth(1) == 40e9);
  check_round_trip(c.value());
}
