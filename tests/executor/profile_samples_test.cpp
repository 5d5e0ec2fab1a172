#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "executor/profile_samples.hpp"

using namespace gantry;

namespace {

// Proxy ops of one signature with 400-byte outputs, and the given edges.
Result<Graph> proxies(int ops, const std::vector<std::pair<OpId, OpId>>& edges) {
  GraphBuilder builder("g");
  for (int k = 0; k < ops; ++k) {
    OpSpec op;
    op.name = std::string(1, static_cast<char>('a' + k));
    op.flops = 1e6;
    op.output_bytes = 400;
    builder.add_op(op);
  }
  for (const auto& [src, dst] : edges) builder.add_edge(src, dst, 400);
  return builder.build();
}

// a feeds b and c.
Result<Graph> fork() { return proxies(3, {{0, 1}, {0, 2}}); }

// `count` CPU devices with `streams` streams each, with or without a copy engine.
Cluster cpu_devices(int count, bool copy_engine, int streams = 1) {
  auto c = Cluster::from_yaml("devices:\n  - {count: " + std::to_string(count) + ", streams: " + std::to_string(streams) +
                                  ", kind: CPU, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1, copy_engine: " +
                                  (copy_engine ? "true" : "false") + "}\n",
                              "cpu.yaml");
  REQUIRE(c.ok());
  return std::move(c).value();
}

}  // namespace

TEST_CASE("a measured run becomes op samples and transfer samples with the consumer's wake-up", "[executor]") {
  // a (device 0) feeds b (device 1) and c (device 0).
  const Result<Graph> g = fork();
  REQUIRE(g.ok());
  const Cluster cluster = cpu_devices(2, true);
  RunRecord run;
  run.ops = {{0, 0, 0.0, 1.0}, {1, 1, 1.5, 2.0}, {2, 0, 1.0, 3.0}};
  // The copy waits 0.1 s for its link thread and takes 0.2 s; b starts 0.2 s after it arrives.
  run.transfers = {{0, 0, 1, 1.1, 1.3, 400}};
  run.makespan = 3.0;
  ProfileTable samples;
  add_profile_samples(g.value(), cluster, run, &samples);
  const OpSignature proxy = op_signature(g.value(), 0);
  CHECK(*samples.op_time("CPU", proxy) == Approx((1.0 + 0.5 + 2.0) / 3));  // all three share a signature
  const auto entries = samples.entries();
  bool found = false;
  for (const ProfileEntry& e : entries)
    if (e.device_kind == "CPU->CPU") {
      found = true;
      CHECK(e.op.work == 400);
      CHECK(e.seconds.mean == Approx((1.3 - 1.0) + 0.2));  // from a's end to b's possible start
    }
  CHECK(found);
}

TEST_CASE("a device without a copy engine times each copy from the end of its previous one", "[executor]") {
  // a (device 0) feeds b (device 1) and c (device 2); device 0 copies a to 1, then to 2.
  const Result<Graph> g = fork();
  REQUIRE(g.ok());
  const Cluster cluster = cpu_devices(3, false);
  RunRecord run;
  // Copies 1.0-1.2 (to 1) and 1.2-1.5 (to 2); b and c start on arrival: no wake-up gap.
  run.ops = {{0, 0, 0.0, 1.0}, {1, 1, 1.2, 2.0}, {2, 2, 1.5, 2.5}};
  run.transfers = {{0, 0, 1, 1.0, 1.2, 400}, {0, 0, 2, 1.2, 1.5, 400}};
  run.makespan = 2.5;
  ProfileTable samples;
  add_profile_samples(g.value(), cluster, run, &samples);
  std::vector<double> copies;
  for (const ProfileEntry& e : samples.entries())
    if (e.device_kind == "CPU->CPU") {
      CHECK(e.seconds.count == 2);
      CHECK(e.seconds.mean == Approx((0.2 + 0.3) / 2));  // not (0.2 + 0.5) / 2: the second waited for the first
      copies.push_back(e.seconds.mean);
    }
  CHECK(copies.size() == 1);
}

TEST_CASE("copies of different ops, made on two streams of one device, are timed apart", "[executor]") {
  // a feeds b, c feeds d; a and c run on device 0's two streams, b and d on device 1.
  const Result<Graph> g = proxies(4, {{0, 1}, {2, 3}});
  REQUIRE(g.ok());
  RunRecord run;
  // a's copy runs 1.0-2.0 on one stream, c's 1.1-1.3 on the other; b and d start on arrival.
  run.ops = {{0, 0, 0.0, 1.0}, {1, 1, 2.0, 2.5}, {2, 0, 0.0, 1.1}, {3, 1, 1.3, 1.9}};
  run.transfers = {{0, 0, 1, 1.0, 2.0, 400}, {2, 0, 1, 1.1, 1.3, 400}};
  run.makespan = 2.5;
  ProfileTable samples;
  add_profile_samples(g.value(), cpu_devices(2, false, 2), run, &samples);
  int found = 0;
  for (const ProfileEntry& e : samples.entries())
    if (e.device_kind == "CPU->CPU") {
      ++found;
      CHECK(e.seconds.mean == Approx((1.0 + 0.2) / 2));  // c's copy did not wait for a's
    }
  CHECK(found == 1);
}
