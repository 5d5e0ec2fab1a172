#include <catch2/catch.hpp>
#include <cmath>
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

TEST_CASE("noise is seeded, multiplicative and has mean one", "[sim]") {
  // One op of cost c alone: the makespan is c times the op's noise factor.
  auto single = [](double cost) {
    GraphBuilder b("single");
    b.add_op(op("x", cost));
    return b.build().value();
  };
  Graph g1 = single(3), g2 = single(6);
  Cluster c = unit_cluster(1);
  CostTable c1(g1, c), c2(g2, c);
  SimOptions options;
  options.noise_sigma = 0.3;
  const Placement p{{0}, {}};
  double sum = 0, sum_log = 0, sum_log2 = 0;
  const int draws = 20000;
  for (int seed = 1; seed <= draws; ++seed) {
    options.seed = static_cast<std::uint64_t>(seed);
    const double a = Simulator(g1, c1, c, options).makespan(p);
    const double b = Simulator(g2, c2, c, options).makespan(p);
    REQUIRE(b == Approx(2 * a).epsilon(1e-12));  // multiplicative: the same factor scales any cost
    sum += a / 3;
    sum_log += std::log(a / 3);
    sum_log2 += std::log(a / 3) * std::log(a / 3);
  }
  // Log-normal with mean 1: E[f] = 1, E[log f] = -sigma^2/2, sd(log f) = sigma. Standard errors
  // over 20000 draws are about 0.002, so these bounds fail only for a wrong distribution.
  CHECK(sum / draws == Approx(1.0).margin(0.01));
  CHECK(sum_log / draws == Approx(-0.045).margin(0.01));
  CHECK(std::sqrt(sum_log2 / draws - (sum_log / draws) * (sum_log / draws)) == Approx(0.3).margin(0.01));
  options.seed = 7;
  CHECK(Simulator(g1, c1, c, options).makespan(p) == Simulator(g1, c1, c, options).makespan(p));
}

TEST_CASE("noise draws are common random numbers across placements", "[sim]") {
  // Independent ops: whatever the placement, the devices' busy times add up to the sum of
  // cost_i * factor_i, so they agree across placements only if op i gets the same factor in each.
  GraphBuilder b("independent");
  for (int i = 0; i < 30; ++i) b.add_op(op("o" + std::to_string(i), 1 + i % 5));
  Graph g = b.build().value();
  Cluster c = unit_cluster(3);
  CostTable costs(g, c);
  SimOptions options;
  options.noise_sigma = 0.5;
  options.seed = 11;
  Simulator sim(g, costs, c, options);
  auto total_busy = [&](const Placement& p) {
    SimResult r = sim.run(p);
    return r.busy[0] + r.busy[1] + r.busy[2];
  };
  Placement all_on_one{std::vector<std::int32_t>(30, 0), {}}, spread;
  for (int i = 0; i < 30; ++i) spread.device.push_back(static_cast<std::int32_t>((i * 7) % 3));
  CHECK(total_busy(spread) == Approx(total_busy(all_on_one)).epsilon(1e-12));
}

TEST_CASE("with several noise draws makespan() estimates the expected makespan", "[sim]") {
  GraphBuilder b("single");
  b.add_op(op("x", 10));
  Graph g = b.build().value();
  Cluster c = unit_cluster(1);
  CostTable costs(g, c);
  SimOptions options;
  options.noise_sigma = 0.3;
  options.noise_samples = 4000;
  // Mean of 4000 log-normal factors with sigma 0.3: standard error 0.3 / sqrt(4000) = 0.005.
  CHECK(Simulator(g, costs, c, options).makespan(Placement{{0}, {}}) == Approx(10).epsilon(0.025));
  options.noise_samples = 1;
  const double one = Simulator(g, costs, c, options).makespan(Placement{{0}, {}});
  CHECK(std::abs(one - 10) > 1e-9);  // a single draw is not the mean
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

TEST_CASE("the lower bound never exceeds a simulated makespan, whatever the runtime", "[sim]") {
  // Property over random graphs x streams (cluster and --streams) x dispatch x links x both
  // engines, noise off.
  std::mt19937_64 rng(3);
  int runs = 0;
  for (int graph_seed = 0; graph_seed < 12; ++graph_seed) {
    GraphBuilder b("random");
    const int n = 20 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) b.add_op(op("r" + std::to_string(i), 1 + rng() % 9, static_cast<double>(rng() % 5)));
    for (int i = 1; i < n; ++i)
      for (int k = 0; k < 2; ++k) b.add_edge(static_cast<OpId>(rng() % i), i, static_cast<double>(rng() % 4));
    Graph g = b.build().value();
    const int devices = 1 + static_cast<int>(rng() % 4);
    for (int cluster_streams : {1, 3}) {
      Cluster c = unit_cluster(devices, cluster_streams);
      CostTable costs(g, c);
      for (int streams : {0, 1, 16})
        for (Dispatch dispatch : {Dispatch::fifo, Dispatch::priority})
          for (LinkModel links : {LinkModel::contention, LinkModel::unlimited})
            for (bool doppler : {false, true}) {
              SimOptions options;
              options.streams = streams;
              options.dispatch = dispatch;
              options.links = links;
              options.doppler = doppler;
              const double bound = makespan_lower_bound(g, costs, c, options);
              Simulator sim(g, costs, c, options);
              for (int trial = 0; trial < 4; ++trial) {
                Placement p;
                for (int i = 0; i < n; ++i) p.device.push_back(static_cast<std::int32_t>(rng() % devices));
                if (dispatch == Dispatch::priority)
                  for (int i = 0; i < n; ++i) p.priority.push_back(static_cast<double>(rng() % 100));
                const double ms = sim.makespan(p);
                INFO("graph " << graph_seed << " streams " << streams << "/" << cluster_streams << " doppler " << doppler);
                REQUIRE(bound <= ms);
                ++runs;
              }
            }
    }
  }
  CHECK(runs == 12 * 2 * 3 * 2 * 2 * 2 * 4);
}

TEST_CASE("the lower bound counts the streams the runtime gives each device", "[sim]") {
  // 8 independent unit ops on 2 devices: work 8 over 2 x s streams.
  GraphBuilder b("wide");
  for (int i = 0; i < 8; ++i) b.add_op(op("w" + std::to_string(i), 1));
  Graph g = b.build().value();
  Cluster c = unit_cluster(2, 1);
  CostTable costs(g, c);
  SimOptions options;
  CHECK(makespan_lower_bound(g, costs, c, options) == 4);
  options.streams = 4;
  CHECK(makespan_lower_bound(g, costs, c, options) == 1);
  Placement p{{0, 0, 0, 0, 1, 1, 1, 1}, {}};
  CHECK(Simulator(g, costs, c, options).makespan(p) == 1);
  options.doppler = true;  // one op at a time per device, whatever --streams says
  CHECK(makespan_lower_bound(g, costs, c, options) == 4);
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

namespace {

// `a` on device 0 feeds one consumer on each of devices 1..fan, through `bytes`-byte tensors.
Graph fan_out_to(int fan, double bytes) {
  GraphBuilder b("fan_out_to");
  b.add_op(op("a", 1));
  for (int k = 1; k <= fan; ++k) {
    b.add_op(op("c" + std::to_string(k), 1));
    b.add_edge(0, k, bytes);
  }
  return b.build().value();
}

double transfer_span(const SimResult& r) {
  double first = 1e300, last = 0;
  for (const TransferTiming& t : r.transfer_log) {
    first = std::min(first, t.start);
    last = std::max(last, t.end);
  }
  return last - first;
}

}  // namespace

TEST_CASE("a device's egress port is shared: fanning out to 3 peers takes 3 transfers' time", "[sim]") {
  // 4xP100-pcie: 10 GB/s links behind 10 GB/s ports, 10 us latency. One 100 MB transfer takes
  // 10e-6 + 1e8 / 10e9 s; three at once through one port send their data one after another (the
  // latency of the last one overlaps nothing): 3 x 1e8 / 10e9 + 10e-6.
  Cluster c = Cluster::load("4xP100-pcie").value();
  Graph g = fan_out_to(3, 1e8);
  CostTable costs(g, c);
  SimOptions options;
  options.record = true;
  const double one = 10e-6 + 1e8 / 10e9;
  SimResult r = Simulator(g, costs, c, options).run(Placement{{0, 1, 2, 3}, {}});
  REQUIRE(r.transfers == 3);
  CHECK(transfer_span(r) == Approx(3 * 1e8 / 10e9 + 10e-6).epsilon(1e-12));
  CHECK(transfer_span(r) == Approx(3 * one - 2 * 10e-6).epsilon(1e-12));
  options.links = LinkModel::unlimited;  // ports ignored: all three at once
  CHECK(transfer_span(Simulator(g, costs, c, options).run(Placement{{0, 1, 2, 3}, {}})) == Approx(one).epsilon(1e-12));
}

TEST_CASE("an ingress port is shared by transfers into one device", "[sim]") {
  Cluster c = Cluster::load("4xP100-pcie").value();
  GraphBuilder b("fan_in");
  for (int k = 0; k < 3; ++k) b.add_op(op("s" + std::to_string(k), 1));
  b.add_op(op("sink", 1));
  for (int k = 0; k < 3; ++k) b.add_edge(k, 3, 1e8);
  Graph g = b.build().value();
  CostTable costs(g, c);
  SimOptions options;
  options.record = true;
  SimResult r = Simulator(g, costs, c, options).run(Placement{{0, 1, 2, 3}, {}});
  CHECK(transfer_span(r) == Approx(3 * 1e8 / 10e9 + 10e-6).epsilon(1e-12));
}

TEST_CASE("a GPU's NIC limits its traffic to the other host", "[sim]") {
  // 2x8xH100-ib: GPU 0 sends to the eight GPUs of host 1 through its own 50 GB/s NIC.
  Cluster c = Cluster::load("2x8xH100-ib").value();
  Graph g = fan_out_to(8, 1e9);
  CostTable costs(g, c);
  SimOptions options;
  options.record = true;
  const Placement p{{0, 8, 9, 10, 11, 12, 13, 14, 15}, {}};
  SimResult r = Simulator(g, costs, c, options).run(p);
  CHECK(transfer_span(r) == Approx(8 * 1e9 / 50e9 + 5e-6).epsilon(1e-12));
}

TEST_CASE("a port faster than the link is shared in proportion to bandwidth", "[sim]") {
  // Links of 1 byte/unit behind an egress port of 2 bytes/unit: each 2-byte transfer takes 2 units
  // and holds the port for half of that, so the second starts at 1 and ends at 3.
  std::vector<Device> devices;
  for (int d = 0; d < 3; ++d) devices.push_back(Device{"d" + std::to_string(d), "unit", 1, 1, 1e9, 1, 0, 2, 0, 0});
  Cluster c("ports", devices);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      if (a != b) c.set_link(a, b, Link{1, 0});
  Graph g = fan_out_to(2, 2);
  CostTable costs(g, c);
  SimOptions options;
  options.record = true;
  SimResult r = Simulator(g, costs, c, options).run(Placement{{0, 1, 2}, {}});
  REQUIRE(r.transfer_log.size() == 2);
  CHECK(r.transfer_log[0].start == 1);
  CHECK(r.transfer_log[0].end == 3);
  CHECK(r.transfer_log[1].start == 2);
  CHECK(r.transfer_log[1].end == 4);
  CHECK(r.makespan == 5);
}

TEST_CASE("a placement is checked once at the simulator's entry", "[sim]") {
  Graph g = fan_out();
  Cluster c = unit_cluster(2);
  CostTable costs(g, c);
  Simulator sim(g, costs, c);
  SimResult r = sim.run(Placement{{0, 2, 1}, {}});
  CHECK_FALSE(r.completed);
  CHECK_THAT(r.error, Catch::Contains("op 1 (b)") && Catch::Contains("device 2"));
  CHECK_THROWS_WITH(sim.makespan(Placement{{0, -1, 1}, {}}), Catch::Contains("op 1 (b)"));
  CHECK_THROWS_WITH(sim.makespan(Placement{{0, 1}, {}}), Catch::Contains("2 entries for a graph of 3 ops"));
  CHECK_THAT(sim.run(Placement{{0, 1, 1}, {1, 2}}).error, Catch::Contains("2 priorities"));
  CHECK_THAT(sim.run(Placement{{0, 1, 1}, {1, NAN, 2}}).error, Catch::Contains("op 1 (b)") && Catch::Contains("finite"));
  SimOptions doppler;
  doppler.doppler = true;
  CHECK_FALSE(Simulator(g, costs, c, doppler).run(Placement{{0, 1, 1 << 30}, {}}).completed);
}

TEST_CASE("memory tracking counts received copies on devices beyond the 64th", "[sim]") {
  // x (10 bytes) on device 0 feeds y on device 69 and z on device 65: each receiving device holds a
  // copy until the consumer ends.
  GraphBuilder b("wide_cluster");
  OpSpec x = op("x", 1), y = op("y", 1), z = op("z", 1);
  x.output_bytes = 10;
  y.output_bytes = 3;
  z.output_bytes = 4;
  b.add_op(x);
  b.add_op(y);
  b.add_op(z);
  b.add_edge(0, 1, 10);
  b.add_edge(0, 2, 10);
  Graph g = b.build().value();
  Cluster c = unit_cluster(70);
  CostTable costs(g, c);
  SimOptions options;
  options.track_memory = true;
  SimResult r = Simulator(g, costs, c, options).run(Placement{{0, 69, 65}, {}});
  CHECK(r.peak_memory[0] == 10);
  CHECK(r.peak_memory[69] == 13);
  CHECK(r.peak_memory[65] == 14);
  CHECK(r.peak_memory[64] == 0);
}
