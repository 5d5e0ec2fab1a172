#include <catch2/catch.hpp>
#include <random>

#include "sim/simulator.hpp"
#include "tuner/local_search.hpp"
#include "tuner/placement_method.hpp"

using namespace gantry;

namespace {

// Twelve ops on two identical devices with free links; small enough to enumerate all 4096
// placements for the true optimum.
Graph small_graph(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  GraphBuilder b("small");
  for (int i = 0; i < 12; ++i) {
    OpSpec op;
    op.name = "o" + std::to_string(i);
    op.cost = 1 + static_cast<double>(rng() % 9);
    b.add_op(op);
  }
  for (int i = 1; i < 12; ++i)
    if (rng() % 3 != 0) b.add_edge(static_cast<OpId>(rng() % i), i);
  return b.build().value();
}

double brute_force_optimum(const Graph& g, const CostTable& costs, const Cluster& c, const SimOptions& options) {
  Simulator sim(g, costs, c, options);
  double best = 1e300;
  Placement p{std::vector<std::int32_t>(g.size(), 0), {}};
  for (int mask = 0; mask < (1 << g.size()); ++mask) {
    for (int i = 0; i < g.size(); ++i) p.device[i] = mask >> i & 1;
    best = std::min(best, sim.makespan(p));
  }
  return best;
}

SearchBudget evaluations_only(long evaluations) {
  SearchBudget budget;
  budget.seconds = 0;
  budget.evaluations = evaluations;
  return budget;
}

}  // namespace

TEST_CASE("search reaches the brute-force optimum where the heuristics do not", "[tuner]") {
  Cluster c = Cluster::identical(2).value();
  int instances = 0;
  for (std::uint64_t seed = 1; seed <= 40 && instances < 5; ++seed) {
    Graph g = small_graph(seed);
    CostTable costs(g, c);
    PlacementProblem problem{g, c, costs, {}};
    const double optimum = brute_force_optimum(g, costs, c, problem.sim);
    const PlacementOutcome start = best_heuristic(problem, evaluations_only(0));
    if (start.makespan == optimum) continue;  // only instances where search has something to find
    ++instances;
    PlacementOutcome found = place_search(problem, evaluations_only(20000));
    INFO("seed " << seed << ": heuristics " << start.makespan << ", optimum " << optimum);
    CHECK(found.makespan == optimum);
  }
  CHECK(instances == 5);
}

TEST_CASE("evaluation budgets are honoured exactly, heuristics included", "[tuner]") {
  Graph g = small_graph(3);
  Cluster c = Cluster::identical(3).value();
  CostTable costs(g, c);
  PlacementProblem problem{g, c, costs, {}};
  for (long budget : {1L, 5L, 33L, 100L, 1001L}) {
    INFO("budget " << budget);
    CHECK(place_search(problem, evaluations_only(budget)).evaluations == budget);
  }
  // The annealer alone: exactly max_evaluations simulator runs, its start included.
  LocalSearch search(problem, 5);
  const Placement start{std::vector<std::int32_t>(g.size(), 0), {}};
  AnnealResult r = search.run(start, [](long) { return 0.0; }, 0.02, 2e-4, {}, 77);
  CHECK(r.evaluations == 77);
}

TEST_CASE("moves are undone: the best and last placements match their makespans", "[tuner]") {
  Graph g = small_graph(9);
  Cluster c = Cluster::load("4xP100-pcie").value();
  CostTable costs(g, c);
  for (Dispatch dispatch : {Dispatch::fifo, Dispatch::priority}) {
    SimOptions options;
    options.dispatch = dispatch;
    PlacementProblem problem{g, c, costs, options};
    LocalSearch search(problem, 11);
    const Placement start{std::vector<std::int32_t>(g.size(), 0), {}};
    AnnealResult r = search.run(start, [](long e) { return e / 3000.0; });
    Simulator fresh(g, costs, c, options);
    CHECK(fresh.makespan(r.best) == r.best_makespan);
    CHECK(fresh.makespan(r.last) == r.last_makespan);
    CHECK(r.best_makespan <= r.start_makespan);
    CHECK(r.evaluations >= 3000);
  }
}

TEST_CASE("a graph whose ops all cost nothing still anneals (no NaN)", "[tuner]") {
  GraphBuilder b("free");
  for (int i = 0; i < 10; ++i) {
    OpSpec op;
    op.name = "f" + std::to_string(i);
    op.cost = 0;
    b.add_op(op);
  }
  Graph g = b.build().value();
  Cluster c = Cluster::identical(4).value();
  CostTable costs(g, c);
  PlacementProblem problem{g, c, costs, {}};
  LocalSearch search(problem, 3);
  const Placement start{std::vector<std::int32_t>(g.size(), 0), {}};
  AnnealResult r = search.run(start, [](long) { return 0.0; }, 0.02, 2e-4, {}, 200);
  CHECK(r.best_makespan == 0);
  CHECK(r.mean_makespan == 0);
  CHECK(r.last.device != start.device);  // equal moves are accepted; a NaN loss rejects them all
}

TEST_CASE("search rejects an invalid start placement", "[tuner]") {
  Graph g = small_graph(1);
  Cluster c = Cluster::identical(2).value();
  CostTable costs(g, c);
  PlacementProblem problem{g, c, costs, {}};
  LocalSearch search(problem, 1);
  Placement bad{std::vector<std::int32_t>(g.size(), 0), {}};
  bad.device[4] = 9;
  CHECK_THROWS_WITH(search.run(bad, [](long) { return 1.0; }), Catch::Contains("op 4"));
}
