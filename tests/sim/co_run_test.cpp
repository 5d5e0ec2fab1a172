// The co-run slowdown in the simulator: an op that starts while another device of its host runs
// (or starts at the same instant) takes its time times its device's factor; ops on other hosts, and
// ops that never overlap, keep their solo times. Expected makespans are worked out by hand.
#include <catch2/catch.hpp>

#include "core/profile_table.hpp"
#include "sim/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace gantry;
using gantry::testing::op;
using gantry::testing::unit_cluster;

namespace {

// Two unit devices, on one host or on two.
Cluster pair_cluster(bool same_host) {
  Cluster c = unit_cluster(2);
  if (same_host) return c;
  std::vector<Device> devices = c.devices();
  devices[1].host = 1;
  Cluster split("split", devices);
  split.set_link(0, 1, Link{1, 0});
  split.set_link(1, 0, Link{1, 0});
  return split;
}

ProfileTable slowdown(double factor) {
  ProfileTable t;
  t.add_co_run_slowdown("unit", factor);
  return t;
}

double makespan(const Graph& g, const Cluster& c, const ProfileTable& profiles, std::vector<std::int32_t> devices) {
  CostTable costs(g, c, &profiles);
  Simulator sim(g, costs, c);
  return sim.makespan(Placement{std::move(devices), {}});
}

}  // namespace

TEST_CASE("ops running beside each other on one host take the co-run slowdown", "[sim]") {
  GraphBuilder b("pair");
  b.add_op(op("a", 2));
  b.add_op(op("b", 2));
  const Graph g = b.build().value();
  const ProfileTable profiles = slowdown(1.5);
  // Both start at 0 on the two devices of one host: 2 x 1.5 each, whichever is dispatched first.
  for (std::vector<std::int32_t> devices : {std::vector<std::int32_t>{0, 1}, std::vector<std::int32_t>{1, 0}}) {
    const Cluster c = pair_cluster(true);
    CostTable costs(g, c, &profiles);
    SimOptions options;
    options.record = true;
    const SimResult r = Simulator(g, costs, c, options).run(Placement{devices, {}});
    CHECK(r.ops[0].end == Approx(3.0));
    CHECK(r.ops[1].end == Approx(3.0));
  }
  // One device: one after the other, alone: 2 + 2.
  CHECK(makespan(g, pair_cluster(true), profiles, {0, 0}) == Approx(4.0));
  // Two hosts: nothing shared, 2.
  CHECK(makespan(g, pair_cluster(false), profiles, {0, 1}) == Approx(2.0));
  // Without a measured factor, 2.
  CHECK(makespan(g, pair_cluster(true), ProfileTable{}, {0, 1}) == Approx(2.0));
}

TEST_CASE("the co-run slowdown is decided when an op starts", "[sim]") {
  // a (cost 4) on device 0; c (cost 1) then d (cost 1) on device 1, d after c; e (cost 1) on
  // device 1 after a (transfer time 0).
  GraphBuilder b("staggered");
  b.add_op(op("a", 4, 0));
  b.add_op(op("c", 1, 0));
  b.add_op(op("d", 1, 0));
  b.add_op(op("e", 1, 0));
  b.add_edge(1, 2, 0);
  b.add_edge(0, 3, 0);
  const Graph g = b.build().value();
  // a and c start together: a takes 8, c takes 2; d starts at 2 beside a: 2, ends at 4; e starts
  // at 8, when device 0 is idle: 1, ends at 9.
  CHECK(makespan(g, pair_cluster(true), slowdown(2.0), {0, 1, 1, 1}) == Approx(9.0));
  // Everything on device 1: one op at a time, alone: 4 + 1 + 1 + 1.
  CHECK(makespan(g, pair_cluster(true), slowdown(2.0), {1, 1, 1, 1}) == Approx(7.0));
}

TEST_CASE("an op that takes no time is no neighbour", "[sim]") {
  // a takes no time on device 0, b takes 2 on device 1, both at 0: b runs alone.
  GraphBuilder b("free");
  b.add_op(op("a", 0));
  b.add_op(op("b", 2));
  const Graph g = b.build().value();
  CHECK(makespan(g, pair_cluster(true), slowdown(1.5), {0, 1}) == Approx(2.0));
  CHECK(makespan(g, pair_cluster(true), slowdown(1.5), {1, 0}) == Approx(2.0));
}

TEST_CASE("the co-run slowdown counts each busy neighbour on the host", "[sim]") {
  // Four unit devices of one host (a GPU's partitions, say), factor 1.5, four ops of 2.
  GraphBuilder b("four");
  for (const char* name : {"a", "b", "c", "d"}) b.add_op(op(name, 2));
  const Graph g = b.build().value();
  const Cluster c = unit_cluster(4);
  // a, b, c start together, two busy neighbours each: 2 x (1 + 0.5 x 2) = 4; d follows c at 4,
  // when the others have ended: alone, 2. Makespan 6.
  CHECK(makespan(g, c, slowdown(1.5), {0, 1, 2, 2}) == Approx(6.0));
  // All four together, three neighbours each: 2 x (1 + 0.5 x 3) = 5.
  CHECK(makespan(g, c, slowdown(1.5), {0, 1, 2, 3}) == Approx(5.0));
  // Two pairs one after the other, one neighbour each: 2 x 1.5, twice (the rule on hosts of two).
  CHECK(makespan(g, c, slowdown(1.5), {0, 1, 0, 1}) == Approx(6.0));
}
