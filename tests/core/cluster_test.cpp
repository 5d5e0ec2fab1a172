#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "core/fingerprint.hpp"

using namespace gantry;

TEST_CASE("every built-in preset loads", "[core]") {
  for (const auto& [name, devices] : std::vector<std::pair<std::string, int>>{
           {"4xP100-pcie", 4}, {"8xV100-nvlink", 8}, {"8xH100-nvswitch", 8}, {"2x8xH100-ib", 16}, {"cpu-2", 2}}) {
    auto c = Cluster::load(name);
    INFO(name);
    REQUIRE(c.ok());
    CHECK(c.value().size() == devices);
    CHECK(c.value().name() == name);
  }
}

TEST_CASE("the V100 hybrid cube mesh gives every GPU six NVLinks", "[core]") {
  auto c = Cluster::load("8xV100-nvlink").value();
  for (int a = 0; a < 8; ++a) {
    double nvlinks = 0;
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      CHECK(c.link(a, b).bandwidth == c.link(b, a).bandwidth);
      if (c.link(a, b).bandwidth > 10e9) nvlinks += c.link(a, b).bandwidth / 25e9;
    }
    CHECK(nvlinks == 6);
  }
  CHECK(c.link(0, 5).bandwidth == 10e9);  // no direct link: PCIe
}

TEST_CASE("two hosts use the inter-host link across hosts", "[core]") {
  auto c = Cluster::load("2x8xH100-ib").value();
  CHECK(c.link(0, 7).bandwidth == 450e9);
  CHECK(c.link(0, 8).bandwidth == 50e9);
  CHECK(c.device(8).host == 1);
}

TEST_CASE("identical:N has free links", "[core]") {
  auto c = Cluster::load("identical:3");
  REQUIRE(c.ok());
  CHECK(c.value().size() == 3);
  CHECK(c.value().link(0, 1).bandwidth == 0);
}

TEST_CASE("bad cluster specs are clear errors", "[core]") {
  auto zero = Cluster::load("identical:0");
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.error().message, Catch::Contains("device count"));
  auto unknown = Cluster::load("16xTPU");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error().message, Catch::Contains("unknown cluster '16xTPU'") && Catch::Contains("4xP100-pcie"));
  auto empty = Cluster::from_yaml("name: x\ndevices: []\n", "x.yaml");
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.error().message, Catch::Contains("x.yaml") && Catch::Contains("device count 0"));
  auto count0 = Cluster::from_yaml("devices:\n  - {count: 0, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n", "c.yaml");
  REQUIRE_FALSE(count0.ok());
  CHECK_THAT(count0.error().message, Catch::Contains("c.yaml:2") && Catch::Contains("device count 0"));
  auto missing = Cluster::from_yaml("devices:\n  - {count: 2, mem_bandwidth_gbs: 1, memory_gib: 1}\n", "m.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("peak_tflops"));
}

TEST_CASE("cluster fingerprints differ by content", "[core]") {
  CHECK(fingerprint(Cluster::load("identical:4").value()) != fingerprint(Cluster::load("4xP100-pcie").value()));
  CHECK(fingerprint(Cluster::load("4xP100-pcie").value()) == fingerprint(Cluster::load("4xP100-pcie").value()));
}
