#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "executor/profile_samples.hpp"

using namespace gantry;

namespace {

// a feeds b and c: three proxy ops of one signature, 400-byte outputs.
Result<Graph> fork() {
  GraphBuilder builder("g");
  for (const char* name : {"a", "b", "c"}) {
    OpSpec op;
    op.name = name;
    op.flops = 1e6;
    op.output_bytes = 400;
    builder.add_op(op);
  }
  builder.add_edge(0, 1, 400);
  builder.add_edge(0, 2, 400);
  return builder.build();
}

}  // namespace

TEST_CASE("a measured run becomes op samples and transfer samples with the consumer's wake-up", "[executor]") {
  // a (device 0) feeds b (device 1) and c (device 0).
  const Result<Graph> g = fork();
  REQUIRE(g.ok());
  auto cluster = Cluster::load("cpu-2");
  REQUIRE(cluster.ok());
  RunRecord run;
  run.ops = {{0, 0, 0.0, 1.0}, {1, 1, 1.5, 2.0}, {2, 0, 1.0, 3.0}};
  // The copy waits 0.1 s for its link thread and takes 0.2 s; b starts 0.2 s after it arrives.
  run.transfers = {{0, 0, 1, 1.1, 1.3, 400}};
  run.makespan = 3.0;
  ProfileTable samples;
  add_profile_samples(g.value(), cluster.value(), run, &samples);
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
  auto cluster = Cluster::from_yaml(
      "devices:\n  - {count: 3, kind: CPU, peak_tflops: 1, mem_bandwidth_gbs: 1, memory_gib: 1, copy_engine: false}\n", "c.yaml");
  REQUIRE(cluster.ok());
  RunRecord run;
  // Copies 1.0-1.2 (to 1) and 1.2-1.5 (to 2); b and c start on arrival: no wake-up gap.
  run.ops = {{0, 0, 0.0, 1.0}, {1, 1, 1.2, 2.0}, {2, 2, 1.5, 2.5}};
  run.transfers = {{0, 0, 1, 1.0, 1.2, 400}, {0, 0, 2, 1.2, 1.5, 400}};
  run.makespan = 2.5;
  ProfileTable samples;
  add_profile_samples(g.value(), cluster.value(), run, &samples);
  std::vector<double> copies;
  for (const ProfileEntry& e : samples.entries())
    if (e.device_kind == "CPU->CPU") {
      CHECK(e.seconds.count == 2);
      CHECK(e.seconds.mean == Approx((0.2 + 0.3) / 2));  // not (0.2 + 0.5) / 2: the second waited for the first
      copies.push_back(e.seconds.mean);
    }
  CHECK(copies.size() == 1);
}
