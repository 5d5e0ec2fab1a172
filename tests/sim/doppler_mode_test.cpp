#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/graph_io.hpp"
#include "sim/simulator.hpp"
#include "sim_fixtures.hpp"
#include "workloads/doppler_costs.hpp"
#include "workloads/workload.hpp"

using namespace gantry;
using gantry::testing::op;

namespace {
SimOptions doppler_options() {
  SimOptions o;
  o.doppler = true;
  o.record = true;
  return o;
}
}  // namespace

TEST_CASE("DOPPLER mode: an op woken by a transfer gets the device before one woken on it", "[sim]") {
  // SimPy hops: a cross-device arrival reaches request() 2 events after its root, a same-device
  // successor 4 events after. At t=2, x (input from device 1) and y (input from q on device 0)
  // both become ready on device 0; the public simulator runs x first, which delays z.
  GraphBuilder b("ties");
  b.add_op(op("p", 1, 1));   // device 1
  b.add_op(op("q", 2, 1));   // device 0
  b.add_op(op("y", 1, 1));   // device 0
  b.add_op(op("x", 5, 1));   // device 0
  b.add_op(op("z", 10, 1));  // device 1
  b.add_edge(0, 3);
  b.add_edge(1, 2);
  b.add_edge(2, 4);
  Graph g = b.build().value();
  Cluster c = Cluster::identical(2).value();
  CostTable costs(g, c);
  Placement p{{1, 0, 0, 0, 1}, {}};
  SimResult r = Simulator(g, costs, c, doppler_options()).run(p);
  CHECK(r.ops[3].start == 2);  // x first
  CHECK(r.ops[2].start == 7);
  CHECK(r.makespan == 19);
  // The general engine (FIFO in event order) runs y first here.
  SimOptions plain;
  plain.links = LinkModel::unlimited;
  plain.dedup_transfers = false;
  CHECK(Simulator(g, costs, c, plain).makespan(p) == 14);
}

TEST_CASE("DOPPLER mode on the shipped FFNN graph", "[sim]") {
  auto graph = read_graph_file(std::string(GANTRY_TEST_DATA) + "/doppler/ffnn_192nodes.txt");
  REQUIRE(graph.ok());
  const Graph& g = graph.value();
  Cluster c = Cluster::identical(4).value();
  CostTable costs(g, c);
  Simulator sim(g, costs, c, doppler_options());
  double total = 0;
  for (OpId op = 0; op < g.size(); ++op) total += g.cost(op);
  SECTION("one device runs everything back to back") {
    CHECK(sim.makespan(Placement{std::vector<std::int32_t>(g.size(), 0), {}}) == total);
  }
  SECTION("every cross-device edge pays its producer's comm cost, with no de-duplication") {
    Placement p;
    for (OpId op = 0; op < g.size(); ++op) p.device.push_back(op % 4);
    SimResult r = sim.run(p);
    double expected = 0;
    int crossing = 0;
    for (EdgeId e = 0; e < g.num_edges(); ++e)
      if (p.device[g.edge_src(e)] != p.device[g.edge_dst(e)]) {
        expected += g.transfer_cost(g.edge_src(e));
        ++crossing;
      }
    CHECK(r.transfers == crossing);
    CHECK(r.transfer_time == expected);
    CHECK(r.makespan > total / 4);
    CHECK(r.makespan == sim.makespan(p));  // deterministic
    // Device capacity 1: no two ops overlap on a device.
    for (OpId a = 0; a < g.size(); ++a)
      for (OpId b = a + 1; b < g.size(); ++b)
        if (r.ops[a].device == r.ops[b].device)
          CHECK((r.ops[a].end <= r.ops[b].start || r.ops[b].end <= r.ops[a].start));
  }
}

TEST_CASE("DOPPLER mode matches the public DOPPLER simulator on 60 golden placements", "[sim]") {
  // Makespans computed by the public SimPy simulator (env/cost.py) for placements of the FFNN graph
  // on 2, 4 and 8 devices (uniform random, blocky, round-robin, single device).
  auto graph = read_graph_file(std::string(GANTRY_TEST_DATA) + "/doppler/ffnn_192nodes.txt");
  REQUIRE(graph.ok());
  const Graph& g = graph.value();
  std::ifstream in(std::string(GANTRY_TEST_DATA) + "/doppler/ffnn_192nodes.golden.json");
  REQUIRE(in.good());
  const nlohmann::json golden = nlohmann::json::parse(in);
  REQUIRE(golden.at("cases").size() == 60);
  int matched = 0;
  for (const auto& c : golden.at("cases")) {
    const int devices = c.at("devices").get<int>();
    Cluster cluster = Cluster::identical(devices).value();
    CostTable costs(g, cluster);
    Simulator sim(g, costs, cluster, doppler_options());
    Placement p{c.at("placement").get<std::vector<std::int32_t>>(), {}};
    REQUIRE(static_cast<int>(p.device.size()) == g.size());
    const double expected = c.at("makespan").get<double>();
    INFO(c.at("kind").get<std::string>() << " on " << devices << " devices");
    CHECK(sim.makespan(p) == expected);
    CHECK(sim.run(p).makespan == expected);
    matched += sim.makespan(p) == expected;
  }
  CHECK(matched == 60);
}

TEST_CASE("DOPPLER mode prices a costs=doppler workload by its multiply-adds and 4x transfers", "[sim]") {
  const Graph g = make_workload("chainmm:size=64,costs=doppler").value();
  Cluster c = Cluster::identical(2).value();
  CostTable costs(g, c);
  Simulator sim(g, costs, c, doppler_options());
  // One device: no transfers, a busy device from start to end, so the makespan is every op's compute.
  double compute = 0;
  for (OpId op = 0; op < g.size(); ++op) compute += g.cost(op);
  CHECK(sim.makespan(Placement{std::vector<std::int32_t>(g.size(), 0), {}}) == Approx(compute).epsilon(1e-12));
  // A chain of two ops on two devices: the second waits for the first and its 4x transfer.
  GraphBuilder b("pair");
  OpSpec first;
  first.name = "a";
  first.kind = OpKind::matmul;
  first.flops = 2000;  // 1000 multiply-adds
  OpSpec second = first;
  second.name = "b";
  b.add_op(first);
  b.add_op(second);
  b.add_edge(0, 1);
  const Graph pair = with_doppler_costs(b.build().value());
  CostTable pair_costs(pair, c);
  CHECK(Simulator(pair, pair_costs, c, doppler_options()).makespan(Placement{{0, 1}, {}}) == 1000 + 4000 + 1000);
}
