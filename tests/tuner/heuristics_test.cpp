#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "core/graph_io.hpp"
#include "sim/simulator.hpp"
#include "tuner/graph_levels.hpp"
#include "tuner/placement_method.hpp"

using namespace gantry;

namespace {

// Topcuoglu, Hariri & Wu (TPDS 2002), figure 2: 10 tasks on 3 heterogeneous processors.
Graph topcuoglu_example() {
  const double w[10][3] = {{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17}, {12, 13, 10},
                           {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};
  GraphBuilder b("topcuoglu");
  for (int t = 0; t < 10; ++t) {
    OpSpec op;
    op.name = "n" + std::to_string(t + 1);
    op.cost_by_kind = {{"P1", w[t][0]}, {"P2", w[t][1]}, {"P3", w[t][2]}};
    b.add_op(op);
  }
  const int edges[15][3] = {{1, 2, 18}, {1, 3, 12}, {1, 4, 9},  {1, 5, 11}, {1, 6, 14},
                            {2, 8, 19}, {2, 9, 16}, {3, 7, 23}, {4, 8, 27}, {4, 9, 23},
                            {5, 9, 13}, {6, 8, 15}, {7, 10, 17}, {8, 10, 11}, {9, 10, 13}};
  for (const auto& e : edges) b.add_edge(EdgeSpec{e[0] - 1, e[1] - 1, 0, static_cast<double>(e[2]), 0});
  return b.build().value();
}

Cluster three_processors() {
  std::vector<Device> devices;
  for (const char* kind : {"P1", "P2", "P3"}) devices.push_back(Device{kind, kind, 1, 1, 1, 1, 0});
  return Cluster("topcuoglu", devices);
}

}  // namespace

TEST_CASE("HEFT reproduces the Topcuoglu et al. example (makespan 80)", "[tuner]") {
  Graph g = topcuoglu_example();
  Cluster c = three_processors();
  CostTable costs(g, c);
  const std::vector<double> rank = upward_ranks(g, costs);
  CHECK(rank[0] == Approx(108.0));
  CHECK(rank[2] == Approx(80.0));
  CHECK(rank[9] == Approx(14.6667).epsilon(1e-4));
  // HEFT's model: the runtime follows its order and links carry any number of transfers at once.
  SimOptions runtime;
  runtime.dispatch = Dispatch::priority;
  runtime.links = LinkModel::unlimited;
  PlacementProblem problem{g, c, costs, runtime};
  PlacementOutcome heft = place_heft(problem);
  CHECK(heft.planned == 80);
  const std::vector<int> expected_processor = {3, 1, 3, 2, 3, 2, 3, 1, 2, 2};  // n1..n10
  for (int t = 0; t < 10; ++t) CHECK(heft.placement.device[t] == expected_processor[t] - 1);
  // Run by the simulator with HEFT's order as priorities, the schedule is the same.
  CHECK(heft.makespan == 80);
  // With one transfer at a time per directed link (FIFO, claimed when the producer ends; a tensor
  // goes to a device once), the same plan, by hand (times in the paper's units):
  //   n1 P3 [0,9]: P3->P1 carries n1->n2 [9,27]; P3->P2 carries n1->n4 [9,18], which n6 shares.
  //   n3 P3 [9,28], n4 P2 [18,26] (then P2->P1 carries n4->n8 [26,53]), n6 P2 [26,42],
  //   n2 P1 [27,40] (P1->P2 carries n2->n9 [40,56]), n5 P3 [28,38] (P3->P2: n5->n9 [38,51]),
  //   n7 P3 [38,49]: n7->n10 waits for P3->P2 until 51: [51,68]; n6->n8 waits for P2->P1 until 53:
  //   [53,68]. n9 P2 [56,68]; n8 P1 [68,73]; n8->n10 on P1->P2 [73,84]; n10 P2 [84,91].
  problem.sim.links = LinkModel::contention;
  CHECK(place_heft(problem).makespan == 91);
}

TEST_CASE("every method's makespan is at least the lower bound", "[tuner]") {
  auto graph = read_graph_file(std::string(GANTRY_TEST_DATA) + "/doppler/ffnn_192nodes.txt");
  REQUIRE(graph.ok());
  const Graph& g = graph.value();
  Cluster c = Cluster::identical(4).value();
  CostTable costs(g, c);
  SimOptions doppler;
  doppler.doppler = true;
  PlacementProblem problem{g, c, costs, doppler};
  const double bound = makespan_lower_bound(g, costs, c, doppler);
  SearchBudget budget;
  budget.seconds = 0;
  budget.evaluations = 3000;
  budget.samples = 20;
  for (const MethodInfo& m : placement_methods()) {
    auto outcome = run_placement_method(m.name, problem, budget);
    REQUIRE(outcome.ok());
    INFO(m.name);
    CHECK(outcome.value().makespan >= bound);
    CHECK(outcome.value().placement.size() == g.size());
    Simulator sim(g, costs, c, doppler);
    CHECK(sim.makespan(outcome.value().placement) == outcome.value().makespan);
  }
  double total = 0;
  for (OpId op = 0; op < g.size(); ++op) total += g.cost(op);
  CHECK(run_placement_method("single", problem).value().makespan == total);
}

TEST_CASE("an unknown method is an error listing the methods", "[tuner]") {
  Graph g = topcuoglu_example();
  Cluster c = three_processors();
  CostTable costs(g, c);
  auto outcome = run_placement_method("genetic", PlacementProblem{g, c, costs, {}});
  REQUIRE_FALSE(outcome.ok());
  CHECK_THAT(outcome.error().message, Catch::Contains("genetic") && Catch::Contains("heft"));
}

TEST_CASE("the method registry takes new methods and refuses a second use of a name", "[tuner]") {
  Graph g = topcuoglu_example();
  Cluster c = three_processors();
  CostTable costs(g, c);
  PlacementProblem problem{g, c, costs, {}};
  auto last_device = [](const PlacementProblem& p, const SearchBudget&) {
    PlacementOutcome o{"all-on-last", Placement{std::vector<std::int32_t>(p.graph.size(), p.cluster.size() - 1), {}}, 0, -1, 1, 0};
    o.makespan = evaluate_placement(p, o.placement);
    return o;
  };
  REQUIRE(register_placement_method({"all-on-last", "test method"}, last_device).ok());
  auto outcome = run_placement_method("all-on-last", problem);
  REQUIRE(outcome.ok());
  double on_p3 = 0;  // every task on P3, back to back: the sum of column P3 of Topcuoglu's table
  for (double w : {9, 18, 19, 17, 10, 9, 11, 14, 20, 16}) on_p3 += w;
  CHECK(outcome.value().makespan == on_p3);
  auto again = register_placement_method({"heft", "another heft"}, last_device);
  REQUIRE_FALSE(again.ok());
  CHECK_THAT(again.error().message, Catch::Contains("'heft' is already registered"));
}

namespace {

// HEFT as published, with the plain linear scan over a device's booked slots for the earliest gap:
// the reference the gap-indexed implementation must agree with exactly.
std::pair<std::vector<int>, double> reference_heft(const Graph& g, const CostTable& costs, int devices) {
  const std::vector<double> rank = upward_ranks(g, costs);
  std::vector<int> topo_index(g.size());
  for (std::size_t i = 0; i < g.topo_order().size(); ++i) topo_index[g.topo_order()[i]] = static_cast<int>(i);
  std::vector<OpId> order(g.size());
  for (OpId i = 0; i < g.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](OpId a, OpId b) {
    return rank[a] != rank[b] ? rank[a] > rank[b] : topo_index[a] < topo_index[b];
  });
  std::vector<int> device(g.size(), -1);
  std::vector<double> finish(g.size(), 0);
  std::vector<std::vector<std::pair<double, double>>> slots(devices);
  double length = 0;
  for (OpId op : order) {
    int best = 0;
    double best_start = 0, best_finish = 0;
    for (int d = 0; d < devices; ++d) {
      double ready = 0;
      for (std::size_t k = 0; k < g.preds(op).size(); ++k) {
        const OpId p = g.preds(op)[k];
        ready = std::max(ready, finish[p] + costs.transfer_time(g.in_edges(op)[k], device[p], d));
      }
      const double duration = costs.op_time(op, d);
      double candidate = ready;
      for (const auto& [start, end] : slots[d]) {
        if (candidate + duration <= start) break;
        candidate = std::max(candidate, end);
      }
      if (d == 0 || candidate + duration < best_finish) {
        best = d;
        best_start = candidate;
        best_finish = candidate + duration;
      }
    }
    slots[best].push_back({best_start, best_finish});
    std::sort(slots[best].begin(), slots[best].end());
    device[op] = best;
    finish[op] = best_finish;
    length = std::max(length, best_finish);
  }
  return {device, length};
}

}  // namespace

TEST_CASE("HEFT agrees with the published algorithm's plain slot scan on random graphs", "[tuner]") {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    GraphBuilder b("random");
    const int n = 30 + static_cast<int>(rng() % 90);
    const int zero_share = trial % 2 == 0 ? 12 : 3;  // every other graph: a third of its ops cost nothing
    for (int i = 0; i < n; ++i) {
      OpSpec op;
      op.name = "o" + std::to_string(i);
      op.cost = rng() % zero_share == 0 ? 0.0 : static_cast<double>(1 + rng() % 11);
      op.transfer_cost = static_cast<double>(rng() % 6);
      b.add_op(op);
    }
    for (int i = 1; i < n; ++i)
      for (int k = 0; k < 2; ++k) b.add_edge(static_cast<OpId>(rng() % i), i);
    Graph g = b.build().value();
    const int devices = 2 + static_cast<int>(rng() % 4);
    Cluster c = Cluster::identical(devices).value();
    CostTable costs(g, c);
    PlacementProblem problem{g, c, costs, {}};
    const PlacementOutcome heft = place_heft(problem);
    const auto [device, length] = reference_heft(g, costs, devices);
    CHECK(heft.planned == length);
    CHECK(std::vector<int>(heft.placement.device.begin(), heft.placement.device.end()) == device);
  }
}

TEST_CASE("random as a method of its own draws all its samples whatever the search budget", "[tuner]") {
  Graph g = topcuoglu_example();
  Cluster c = three_processors();
  CostTable costs(g, c);
  SearchBudget budget;
  budget.seconds = 1e-9;  // search's budget, spent before the first sample
  budget.samples = 40;
  auto outcome = run_placement_method("random", PlacementProblem{g, c, costs, {}}, budget);
  REQUIRE(outcome.ok());
  CHECK(outcome.value().evaluations == 40);
}
