#include <catch2/catch.hpp>
#include <random>

#include "sim/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace gantry;
using gantry::testing::op;
using gantry::testing::unit_cluster;

namespace {

// a (dev0) and b (dev0) run concurrently on two streams; each feeds one consumer on dev1 through a
// 2-byte transfer (2 time units on the unit link).
Graph two_senders() {
  GraphBuilder b("two_senders");
  b.add_op(op("a", 1));
  b.add_op(op("b", 1));
  b.add_op(op("c", 1));
  b.add_op(op("d", 1));
  b.add_edge(0, 2, 2);
  b.add_edge(1, 3, 2);
  return b.build().value();
}

// a (dev0) feeds b and c, both on dev1.
Graph fan_out() {
  GraphBuilder b("fan_out");
  b.add_op(op("a", 1));
  b.add_op(op("b", 1));
  b.add_op(op("c", 1));
  b.add_edge(0, 1, 2);
  b.add_edge(0, 2, 2);
  return b.build().value();
}

}  // namespace

TEST_CASE("one device: makespan is the sum of op costs", "[sim]") {
  GraphBuilder b("chain");
  double total = 0;
  for (int i = 0; i < 20; ++i) {
    b.add_op(op("o" + std::to_string(i), 1 + i % 7));
    total += 1 + i % 7;
    if (i >= 3) b.add_edge(i - 3, i, 5);
  }
  Graph g = b.build().value();
  Cluster c = unit_cluster(3);
  CostTable costs(g, c);
  Simulator sim(g, costs, c);
  Placement p{std::vector<std::int32_t>(20, 2), {}};
  CHECK(sim.makespan(p) == total);
}

TEST_CASE("link contention serialises transfers on one link", "[sim]") {
  Graph g = two_senders();
  Cluster c = unit_cluster(2, 2);
  CostTable costs(g, c);
  Placement p{{0, 0, 1, 1}, {}};
  SimOptions options;
  options.streams = 0;  // the cluster's 2 streams
  options.record = true;
  {
    Simulator sim(g, costs, c, options);
    SimResult r = sim.run(p);
    // a, b: 0..1; transfers 1..3 and 3..5 (FIFO on the link); c 3..4, d 5..6.
    CHECK(r.makespan == 6);
    CHECK(r.transfers == 2);
    CHECK(r.transfer_time == 4);
    CHECK(r.ops[3].start == 5);
  }
  options.links = LinkModel::unlimited;
  Simulator sim(g, costs, c, options);
  CHECK(sim.run(p).makespan == 4);  // both arrive at 3; dev1 has two streams
}

TEST_CASE("a tensor travels to a device once", "[sim]") {
  Graph g = fan_out();
  Cluster c = unit_cluster(2);
  CostTable costs(g, c);
  Placement p{{0, 1, 1}, {}};
  SimOptions options;
  Simulator dedup(g, costs, c, options);
  SimResult r = dedup.run(p);
  CHECK(r.makespan == 5);  // arrives at 3; b 3..4, c 4..5
  CHECK(r.transfers == 1);
  options.dedup_transfers = false;
  Simulator twice(g, costs, c, options);
  SimResult r2 = twice.run(p);
  CHECK(r2.transfers == 2);
  CHECK(r2.makespan == 6);  // second copy waits for the link: 3..5, c 5..6
}

TEST_CASE("streams let a device run ops concurrently", "[sim]") {
  GraphBuilder b("wide");
  for (int i = 0; i < 4; ++i) b.add_op(op("w" + std::to_string(i), 1));
  Graph g = b.build().value();
  Placement p{{0, 0, 0, 0}, {}};
  Cluster one = unit_cluster(1, 1), two = unit_cluster(1, 2);
  CostTable c1(g, one), c2(g, two);
  CHECK(Simulator(g, c1, one).makespan(p) == 4);
  CHECK(Simulator(g, c2, two).makespan(p) == 2);
  SimOptions override_streams;
  override_streams.streams = 4;
  CHECK(Simulator(g, c1, one, override_streams).makespan(p) == 1);
}

TEST_CASE("fixed order runs each device's list in order and reports deadlocks", "[sim]") {
  GraphBuilder b("pair");
  b.add_op(op("a", 1));
  b.add_op(op("b", 3));
  b.add_op(op("c", 1));
  b.add_edge(0, 2);
  Graph g = b.build().value();
  Cluster c = unit_cluster(1);
  CostTable costs(g, c);
  SimOptions options;
  options.dispatch = Dispatch::fixed_order;
  options.record = true;
  Simulator sim(g, costs, c, options);
  Placement p{{0, 0, 0}, {}};
  std::vector<std::vector<OpId>> order = {{1, 0, 2}};
  SimResult r = sim.run(p, &order);
  REQUIRE(r.completed);
  CHECK(r.ops[1].start == 0);
  CHECK(r.ops[0].start == 3);
  CHECK(r.makespan == 5);
  std::vector<std::vector<OpId>> bad = {{2, 0, 1}};  // c before its input a
  SimResult dead = sim.run(p, &bad);
  CHECK_FALSE(dead.completed);
  CHECK_THAT(dead.error, Catch::Contains("deadlock") && Catch::Contains("waits on c"));
}

TEST_CASE("priority dispatch picks the highest priority ready op", "[sim]") {
  GraphBuilder b("prio");
  b.add_op(op("short", 1));
  b.add_op(op("long", 2));
  Graph g = b.build().value();
  Cluster c = unit_cluster(1);
  CostTable costs(g, c);
  SimOptions options;
  options.dispatch = Dispatch::priority;
  options.record = true;
  Simulator sim(g, costs, c, options);
  SimResult fifo_like = sim.run(Placement{{0, 0}, {2, 1}});
  CHECK(fifo_like.ops[0].start == 0);
  SimResult flipped = sim.run(Placement{{0, 0}, {1, 2}});
  CHECK(flipped.ops[1].start == 0);
  CHECK(flipped.ops[0].start == 2);
}

TEST_CASE("noise is seeded and multiplicative", "[sim]") {
  Graph g = fan_out();
  Cluster c = unit_cluster(2);
  CostTable costs(g, c);
  Placement p{{0, 1, 1}, {}};
  SimOptions options;
  options.noise_sigma = 0.2;
  options.seed = 7;
  double a = Simulator(g, costs, c, options).makespan(p);
  double b = Simulator(g, costs, c, options).makespan(p);
  options.seed = 8;
  double other = Simulator(g, costs, c, options).makespan(p);
  CHECK(a == b);
  CHECK(a != other);
  CHECK(a != 5);
}

TEST_CASE("memory: outputs live until their last consumer finishes", "[sim]") {
  GraphBuilder b("mem");
  OpSpec x = op("x", 1), y = op("y", 1), z = op("z", 1);
  x.output_bytes = 10;
  y.output_bytes = 20;
  z.output_bytes = 5;
  y.memory = 100;  // workspace while y runs
  b.add_op(x);
  b.add_op(y);
  b.add_op(z);
  b.add_edge(0, 1, 10);
  b.add_edge(1, 2, 20);
  Graph g = b.build().value();
  Cluster c = unit_cluster(2);
  CostTable costs(g, c);
  SimOptions options;
  options.track_memory = true;
  Simulator sim(g, costs, c, options);
  SimResult same = sim.run(Placement{{0, 0, 0}, {}});
  CHECK(same.peak_memory[0] == 130);  // x's output + y's output + y's workspace
  SimResult split = sim.run(Placement{{0, 0, 1}, {}});
  CHECK(split.peak_memory[0] == 130);
  CHECK(split.peak_memory[1] == 25);  // received copy of y's output + z's output
}

TEST_CASE("the lower bound never exceeds a simulated makespan", "[sim]") {
  std::mt19937_64 rng(3);
  GraphBuilder b("random");
  const int n = 60;
  for (int i = 0; i < n; ++i) b.add_op(op("r" + std::to_string(i), 1 + rng() % 9));
  for (int i = 1; i < n; ++i)
    for (int k = 0; k < 2; ++k) b.add_edge(static_cast<OpId>(rng() % i), i, static_cast<double>(rng() % 4));
  Graph g = b.build().value();
  Cluster c = unit_cluster(4);
  CostTable costs(g, c);
  const double bound = makespan_lower_bound(g, costs, c);
  Simulator sim(g, costs, c);
  for (int trial = 0; trial < 50; ++trial) {
    Placement p;
    for (int i = 0; i < n; ++i) p.device.push_back(static_cast<std::int32_t>(rng() % 4));
    CHECK(sim.makespan(p) >= bound);
  }
}

TEST_CASE("exposed transfer time counts transfers into an idle device", "[sim]") {
  Graph g = fan_out();
  Cluster c = unit_cluster(2);
  CostTable costs(g, c);
  SimOptions options;
  options.record = true;
  SimResult r = Simulator(g, costs, c, options).run(Placement{{0, 1, 1}, {}});
  CHECK(r.transfer_time == 2);
  CHECK(r.exposed_transfer_time == 2);  // dev1 has nothing to do while a's output travels
}
