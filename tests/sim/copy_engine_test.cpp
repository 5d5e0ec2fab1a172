// Devices without a copy engine (Device::copy_engine = false, CPU cores): after an op, the device
// copies its output to each other device that reads it, one copy after another, on the stream that
// computed it, which runs nothing meanwhile; with a copy engine, copies overlap with the device's
// next ops. Every expected time below is worked out by hand (unit links: x bytes take x).
#include <catch2/catch.hpp>

#include "sim/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace gantry;
using gantry::testing::make_graph;
using gantry::testing::unit_cluster;

namespace {

Cluster without_copy_engine(int devices, int streams = 1, double latency = 0) {
  return unit_cluster(devices, streams, false, latency);
}

// a (cost 1) feeds b (cost 1) and c (cost 2), 0.5 bytes each.
Graph fork() { return make_graph("fork", {{"a", 1}, {"b", 1}, {"c", 2}}, {{0, 1, 0.5}, {0, 2, 0.5}}); }

SimResult simulate(const Graph& g, const Cluster& c, std::vector<std::int32_t> devices) {
  CostTable costs(g, c);
  SimOptions options;
  options.record = true;
  return Simulator(g, costs, c, options).run(Placement{std::move(devices), {}});
}

}  // namespace

TEST_CASE("a device without a copy engine makes its copies before its next op", "[sim]") {
  // a on device 0, b on device 1, c on device 0.
  const Graph g = fork();
  // Copy engine: c runs 1-3 while the copy runs 1-1.5; b runs 1.5-2.5. Makespan 3.
  const SimResult engine = simulate(g, unit_cluster(2), {0, 1, 0});
  CHECK(engine.ops[2].start == Approx(1.0));
  CHECK(engine.makespan == Approx(3.0));
  // Without: device 0 copies 1-1.5, then runs c 1.5-3.5; b still runs 1.5-2.5. Makespan 3.5.
  const SimResult self = simulate(g, without_copy_engine(2), {0, 1, 0});
  REQUIRE(self.transfer_log.size() == 1);
  CHECK(self.transfer_log[0].start == Approx(1.0));
  CHECK(self.transfer_log[0].end == Approx(1.5));
  CHECK(self.ops[1].start == Approx(1.5));
  CHECK(self.ops[2].start == Approx(1.5));
  CHECK(self.makespan == Approx(3.5));
  CHECK(self.busy[0] == Approx(3.0));  // busy time counts ops, not copies
}

TEST_CASE("copies to several devices run one after another, one per device", "[sim]") {
  // a (1) on device 0 feeds b (1) on device 1 (0.5 bytes), e (1) on device 2 (0.25 bytes) and b2
  // (1) on device 1 (the tensor already travels there: no second copy); c (1) on device 0.
  const Graph g = make_graph("spread", {{"a", 1}, {"b", 1}, {"e", 1}, {"b2", 1}, {"c", 1}},
                             {{0, 1, 0.5}, {0, 2, 0.25}, {0, 3, 0.5}, {0, 4, 0.5}});
  // Copies 1-1.5 (to device 1) then 1.5-1.75 (to device 2); c 1.75-2.75; b 1.5-2.5 and b2 2.5-3.5
  // on device 1; e 1.75-2.75 on device 2. Makespan 3.5.
  const SimResult self = simulate(g, without_copy_engine(3), {0, 1, 2, 1, 0});
  REQUIRE(self.transfer_log.size() == 2);
  CHECK(self.ops[2].start == Approx(1.75));
  CHECK(self.ops[4].start == Approx(1.75));
  CHECK(self.ops[3].end == Approx(3.5));
  CHECK(self.makespan == Approx(3.5));
  // With copy engines both copies start at 1 on their own links: e 1.25-2.25, c 1-2, b 1.5-2.5,
  // b2 2.5-3.5.
  const SimResult engine = simulate(g, unit_cluster(3), {0, 1, 2, 1, 0});
  CHECK(engine.ops[2].start == Approx(1.25));
  CHECK(engine.ops[4].start == Approx(1.0));
  CHECK(engine.makespan == Approx(3.5));
}

TEST_CASE("a device with two streams runs an op on one while the other copies", "[sim]") {
  const Graph g = fork();
  // a's stream copies 1-1.5; c starts at 1 on the second stream and ends at 3.
  const SimResult self = simulate(g, without_copy_engine(2, 2), {0, 1, 0});
  CHECK(self.ops[2].start == Approx(1.0));
  CHECK(self.makespan == Approx(3.0));
}

TEST_CASE("a link's latency delays the arrival but does not hold the copying device", "[sim]") {
  // As above with a latency of 0.25 on every link: device 0 copies 1-1.5 and runs c 1.5-3.5; the
  // tensor arrives at 1.75 and b runs 1.75-2.75.
  const Cluster c = without_copy_engine(2, 1, 0.25);
  const SimResult self = simulate(fork(), c, {0, 1, 0});
  CHECK(self.ops[2].start == Approx(1.5));
  CHECK(self.ops[1].start == Approx(1.75));
  CHECK(self.makespan == Approx(3.5));
}

TEST_CASE("a self-copying device holds the link for the data's time only", "[sim]") {
  // a (1) and then c (0.1) on device 0 each feed an op on device 1 (0.5 bytes each, latency 0.25);
  // f (1) follows c on device 0. a's copy holds device 0 and the link 1-1.5 (arrival 1.75); c runs
  // 1.5-1.6 and copies 1.6-2.1 (the link is free again at 1.5, not at 1.75); f runs 2.1-3.1.
  const Graph g = make_graph("two copies", {{"a", 1}, {"b", 1}, {"c", 0.1}, {"e", 0.1}, {"f", 1}},
                             {{0, 1, 0.5}, {0, 2, 0}, {2, 3, 0.5}, {2, 4, 0}});
  const Cluster c = without_copy_engine(2, 1, 0.25);
  const SimResult self = simulate(g, c, {0, 1, 0, 1, 0});
  CHECK(self.ops[2].start == Approx(1.5));
  CHECK(self.ops[4].start == Approx(2.1));
  CHECK(self.makespan == Approx(3.1));
}
