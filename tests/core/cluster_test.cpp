#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "core/fingerprint.hpp"

using namespace gantry;

TEST_CASE("every built-in preset loads", "[core]") {
  for (const auto& [name, devices] : std::vector<std::pair<std::string, int>>{
           {"4xP100-pcie", 4}, {"8xV100-nvlink", 8}, {"8xH100-nvswitch", 8}, {"2x8xH100-ib", 16}, {"cpu-2", 2},
           {"8xH200-nvswitch", 8}, {"4xH100+4xA100-ib", 8}}) {
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
  CHECK_THAT(count0.error().message, Catch::Contains("c.yaml:2") && Catch::Contains("'count' must be a whole number from 1"));
  auto missing = Cluster::from_yaml("devices:\n  - {count: 2, mem_bandwidth_gbs: 1, memory_gib: 1}\n", "m.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("peak_tflops"));
  // A field of the wrong shape and a link's ends: named, not "bad conversion" (yaml-cpp's words).
  const std::string two = "devices:\n  - {count: 2, kind: A, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n";
  auto kind = Cluster::from_yaml("devices:\n  - {count: 2, kind: [a], peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n", "k.yaml");
  REQUIRE_FALSE(kind.ok());
  CHECK_THAT(kind.error().message, Catch::StartsWith("k.yaml:2: field 'kind' must be a text"));
  auto letters = Cluster::from_yaml(two + "links:\n  - {between: [a, b], bandwidth_gbs: 1}\n", "l.yaml");
  REQUIRE_FALSE(letters.ok());
  CHECK_THAT(letters.error().message, Catch::StartsWith("l.yaml:4: 'between' names device 'a': devices are numbered 0 to 1"));
  auto beyond = Cluster::from_yaml(two + "links:\n  - {between: [0, 2], bandwidth_gbs: 1}\n", "b.yaml");
  REQUIRE_FALSE(beyond.ok());
  CHECK_THAT(beyond.error().message, Catch::StartsWith("b.yaml:4: 'between' names device '2'"));
  auto itself = Cluster::from_yaml(two + "links:\n  - {between: [1, 1], bandwidth_gbs: 1}\n", "s.yaml");
  REQUIRE_FALSE(itself.ok());  // device 1 exists: the problem is the loop
  CHECK_THAT(itself.error().message, Catch::StartsWith("s.yaml:4: a link joins two devices, not device 1 to itself"));
  auto blank = Cluster::from_yaml("devices:\n  - {count: 2, kind: , peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n", "e.yaml");
  REQUIRE(blank.ok());  // `kind:` with nothing after it: as if left out
  CHECK(blank.value().device(0).kind == "device");
  auto fine = Cluster::from_yaml(two + "links:\n  - {between: [1, 0], bandwidth_gbs: 7}\n", "f.yaml");
  REQUIRE(fine.ok());
  CHECK(fine.value().link(0, 1).bandwidth == 7e9);
}

TEST_CASE("cluster fingerprints follow content, not spelling", "[core]") {
  // The P100 preset written differently (two device groups, other field order, comments) is the
  // same machine; one changed link or port is another.
  const std::string same =
      "# the P100 box\nname: other-name\ndevices:\n"
      "  - {kind: P100, count: 2, memory_gib: 16, mem_bandwidth_gbs: 732, peak_tflops: 18.7, ingress_gbs: 10, egress_gbs: 10}\n"
      "  - {count: 2, kind: P100, peak_tflops: 18.7, mem_bandwidth_gbs: 732, memory_gib: 16, streams: 1, host: 0, egress_gbs: 10, ingress_gbs: 10}\n"
      "default_link: {latency_us: 10, bandwidth_gbs: 10}\n";
  const Fingerprint preset = fingerprint(Cluster::load("4xP100-pcie").value());
  CHECK(fingerprint(Cluster::from_yaml(same, "same.yaml").value()) == preset);
  std::string slower_port = same;
  slower_port.replace(slower_port.rfind("ingress_gbs: 10"), 15, "ingress_gbs: 5");
  CHECK(fingerprint(Cluster::from_yaml(slower_port, "port.yaml").value()) != preset);
  std::string slower_link = same;
  slower_link.replace(slower_link.find("bandwidth_gbs: 10}"), 18, "bandwidth_gbs: 9}");
  CHECK(fingerprint(Cluster::from_yaml(slower_link, "link.yaml").value()) != preset);
  CHECK(fingerprint(Cluster::load("identical:4").value()) != fingerprint(Cluster::load("4xP100-pcie").value()));
}

TEST_CASE("device counts and sizes are checked against stated limits", "[core]") {
  for (const char* spec : {"identical:4294967297", "identical:2147483648", "identical:100000", "identical:-3",
                           "identical:1025", "identical:4x", "identical:"}) {
    auto c = Cluster::load(spec);
    INFO(spec);
    REQUIRE_FALSE(c.ok());
    CHECK_THAT(c.error().message, Catch::Contains("1024"));
  }
  CHECK(Cluster::load("identical:1024").value().size() == 1024);
  const std::string base = "devices:\n  - {count: COUNT, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n";
  for (const char* count : {"99999999999", "4294967297", "2147483647", "1025", "2.5", "-1"}) {
    std::string text = base;
    text.replace(text.find("COUNT"), 5, count);
    auto c = Cluster::from_yaml(text, "big.yaml");
    INFO(count);
    REQUIRE_FALSE(c.ok());
    CHECK_THAT(c.error().message, Catch::Contains("big.yaml:2") && Catch::Contains("'count'"));
  }
  auto two_groups = Cluster::from_yaml(
      "devices:\n  - {count: 1000, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n"
      "  - {count: 100, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n",
      "sum.yaml");
  REQUIRE_FALSE(two_groups.ok());
  CHECK_THAT(two_groups.error().message, Catch::Contains("sum.yaml:3") && Catch::Contains("more than 1024 devices"));
  auto streams = Cluster::from_yaml("devices:\n  - {count: 1, streams: 1e9, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n", "s.yaml");
  REQUIRE_FALSE(streams.ok());
  CHECK_THAT(streams.error().message, Catch::Contains("'streams'"));
}

TEST_CASE("a misspelt cluster field is an error, not a default", "[core]") {
  auto typo = Cluster::from_yaml("devices:\n  - {count: 2, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1, egres_gbs: 5}\n", "t.yaml");
  REQUIRE_FALSE(typo.ok());
  CHECK_THAT(typo.error().message, Catch::Contains("t.yaml:2") && Catch::Contains("unknown field 'egres_gbs'"));
  auto top = Cluster::from_yaml("devices:\n  - {count: 2, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\ndefault_links: {bandwidth_gbs: 1}\n", "u.yaml");
  REQUIRE_FALSE(top.ok());
  CHECK_THAT(top.error().message, Catch::Contains("unknown field 'default_links'"));
}

TEST_CASE("ports and NICs: defaults, presets and path bandwidth", "[core]") {
  auto p100 = Cluster::load("4xP100-pcie").value();
  CHECK(p100.device(0).egress_bandwidth == 10e9);
  CHECK(p100.path_bandwidth(0, 1) == 10e9);
  REQUIRE(p100.ports_on_path(0, 1).size() == 2);  // egress of 0, ingress of 1
  auto ib = Cluster::load("2x8xH100-ib").value();
  CHECK(ib.path_bandwidth(0, 1) == 450e9);
  CHECK(ib.path_bandwidth(0, 8) == 50e9);
  CHECK(ib.ports_on_path(0, 1).size() == 2);
  CHECK(ib.ports_on_path(0, 8).size() == 4);  // + both GPUs' NICs
  auto hosts = Cluster::from_yaml(
      "devices:\n  - {count: 2, host: 0, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n"
      "  - {count: 2, host: 1, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n"
      "default_link: {bandwidth_gbs: 100}\nhosts:\n  - {host: 1, nic_gbs: 25}\n",
      "h.yaml");
  REQUIRE(hosts.ok());
  CHECK(hosts.value().path_bandwidth(0, 1) == 100e9);  // same host: no NIC
  CHECK(hosts.value().path_bandwidth(0, 2) == 25e9);   // into host 1 through its NIC
  CHECK(Cluster::load("identical:4").value().ports_on_path(0, 1).empty());
  auto bad_host = Cluster::from_yaml(
      "devices:\n  - {count: 2, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\nhosts:\n  - {host: 3, nic_gbs: 25}\n", "b.yaml");
  REQUIRE_FALSE(bad_host.ok());
  CHECK_THAT(bad_host.error().message, Catch::Contains("b.yaml:4") && Catch::Contains("'host'"));
}

TEST_CASE("links and hosts must be lists of known fields", "[core]") {
  const std::string devices = "devices:\n  - {count: 2, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n";
  auto mapping = Cluster::from_yaml(devices + "links: {between: [0, 1], bandwidth_gbs: 5}\n", "l.yaml");
  REQUIRE_FALSE(mapping.ok());
  CHECK_THAT(mapping.error().message, Catch::Contains("l.yaml:3") && Catch::Contains("'links' must be a list"));
  auto host_typo = Cluster::from_yaml(devices + "hosts:\n  - {host: 0, nic_gb: 5}\n", "h.yaml");
  REQUIRE_FALSE(host_typo.ok());
  CHECK_THAT(host_typo.error().message, Catch::Contains("h.yaml:4") && Catch::Contains("unknown field 'nic_gb'"));
}

TEST_CASE("the mixed H100 + A100 preset: each host's own NVLink, InfiniBand between", "[core]") {
  auto c = Cluster::load("4xH100+4xA100-ib").value();
  CHECK(c.device(0).kind == "H100");
  CHECK(c.device(4).kind == "A100");
  CHECK(c.device(4).peak_flops == 312e12);
  CHECK(c.link(0, 3).bandwidth == 450e9);
  CHECK(c.link(5, 7).bandwidth == 300e9);
  CHECK(c.link(7, 5).bandwidth == 300e9);
  CHECK(c.link(2, 6).bandwidth == 50e9);
  auto h200 = Cluster::load("8xH200-nvswitch").value();
  CHECK(h200.device(7).memory == Approx(141e9).epsilon(0.002));  // 141 GB
}

TEST_CASE("a device without a copy engine is read, written back and fingerprinted apart", "[core]") {
  const std::string with = "devices:\n  - {count: 2, kind: CPU, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1}\n";
  std::string without = with;
  without.replace(without.find("memory_gib: 1}"), 14, "memory_gib: 1, copy_engine: false}");
  auto a = Cluster::from_yaml(with, "a.yaml");
  auto b = Cluster::from_yaml(without, "b.yaml");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a.value().device(1).copy_engine);  // the default: GPUs' DMA engines
  CHECK_FALSE(b.value().device(1).copy_engine);
  CHECK(fingerprint(a.value()) != fingerprint(b.value()));
  auto back = Cluster::from_yaml(b.value().to_yaml(), "back.yaml");
  REQUIRE(back.ok());
  CHECK_FALSE(back.value().device(0).copy_engine);
  CHECK(fingerprint(back.value()) == fingerprint(b.value()));
  std::string bad = with;
  bad.replace(bad.find("memory_gib: 1}"), 14, "memory_gib: 1, copy_engine: sometimes}");
  auto refused = Cluster::from_yaml(bad, "c.yaml");
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("c.yaml:2") && Catch::Contains("'copy_engine' must be true or false"));
}
