#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "executor/profile_samples.hpp"

using namespace gantry;

TEST_CASE("a measured run becomes op samples and transfer samples with the consumer's wake-up", "[executor]") {
  // a (device 0) feeds b (device 1) and c (device 0).
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
  auto g = builder.build();
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
