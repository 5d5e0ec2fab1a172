// P|prec|Cmax: the exact solver against hand-checked instances and an independent brute force
// over integer start times, the lower bounds against both, the STG-like generator's determinism
// and shape, the list decoder against the simulator, and search reaching proven optima.
#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "core/profile_table.hpp"
#include "sim/simulator.hpp"
#include "tuner/identical_schedule.hpp"
#include "tuner/local_search.hpp"
#include "tuner/placement_method.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

namespace {

Graph task_graph(const std::vector<int>& cost, const std::vector<std::pair<int, int>>& edges) {
  GraphBuilder b("tasks", "units");
  for (std::size_t i = 0; i < cost.size(); ++i) {
    OpSpec op;
    op.name = "t" + std::to_string(i);
    op.cost = cost[i];
    b.add_op(op);
  }
  for (auto [u, v] : edges) b.add_edge(u, v);
  return b.build().value();
}

std::vector<double> costs_of(const Graph& g) {
  std::vector<double> d(g.size());
  for (OpId op = 0; op < g.size(); ++op) d[op] = g.cost(op);
  return d;
}

// Independent of list scheduling: time advances one unit at a time and, at every step, any subset
// of the ready tasks may start on the free processors (idling included). Memoized on the state
// (per task: not started, time left, done). Costs must be positive integers.
class TimeStepBruteForce {
 public:
  TimeStepBruteForce(const Graph& g, int processors) : g_(g), p_(processors) {
    for (OpId op = 0; op < g.size(); ++op) cost_.push_back(static_cast<int>(g.cost(op)));
  }
  int solve() {
    std::vector<int> state(cost_.size(), -1);  // -1 not started, k > 0 time left, 0 done
    return best(state);
  }

 private:
  int best(std::vector<int>& state) {
    bool all_done = true;
    for (int s : state) all_done &= s == 0;
    if (all_done) return 0;
    auto it = memo_.find(state);
    if (it != memo_.end()) return it->second;
    int running = 0;
    std::vector<int> ready;
    for (OpId op = 0; op < g_.size(); ++op) {
      if (state[op] > 0) ++running;
      if (state[op] != -1) continue;
      bool ok = true;
      for (OpId pr : g_.preds(op)) ok &= state[pr] == 0;
      if (ok) ready.push_back(op);
    }
    int result = 1 << 29;
    const int subsets = 1 << ready.size();
    for (int mask = 0; mask < subsets; ++mask) {
      if (__builtin_popcount(mask) > p_ - running) continue;
      if (running == 0 && mask == 0) continue;  // all idle: the same state one unit later
      std::vector<int> next = state;
      for (std::size_t k = 0; k < ready.size(); ++k)
        if (mask >> k & 1) next[ready[k]] = cost_[ready[k]];
      for (int& s : next)
        if (s > 0) --s;
      result = std::min(result, 1 + best(next));
    }
    memo_[state] = result;
    return result;
  }

  const Graph& g_;
  int p_;
  std::vector<int> cost_;
  std::map<std::vector<int>, int> memo_;
};

Graph random_small(std::uint64_t seed, int n, int max_cost) {
  std::mt19937_64 rng(seed);
  std::vector<int> cost(n);
  for (int& c : cost) c = 1 + static_cast<int>(rng() % max_cost);
  std::vector<std::pair<int, int>> edges;
  for (int j = 1; j < n; ++j)
    for (int i = 0; i < j; ++i)
      if (rng() % 4 == 0) edges.emplace_back(i, j);
  return task_graph(cost, edges);
}

}  // namespace

TEST_CASE("exact solver: hand-checked instances", "[tuner]") {
  // Three tasks of 2 on two processors: one processor runs two of them.
  Graph three = task_graph({2, 2, 2}, {});
  CHECK(solve_identical_exact(three, costs_of(three), 2).makespan == 4);
  // A chain 3 -> 3 next to four tasks of 1: the chain (6) dominates, the rest fits beside it.
  Graph chain = task_graph({3, 3, 1, 1, 1, 1}, {{0, 1}});
  CHECK(solve_identical_exact(chain, costs_of(chain), 2).makespan == 6);
  // 3,3,2,2,2 on two processors: total 12 split 6 + 6 ({3,3} and {2,2,2}).
  Graph split = task_graph({3, 3, 2, 2, 2}, {});
  CHECK(solve_identical_exact(split, costs_of(split), 2).makespan == 6);
  // Total 8 on two processors: {2,2} and {2,1,1} end together at 4.
  Graph lpt = task_graph({2, 2, 2, 1, 1}, {});
  CHECK(solve_identical_exact(lpt, costs_of(lpt), 2).makespan == 4);
  // Fork-join: 1 -> {4, 4, 4} -> 1 on three processors: 1 + 4 + 1.
  Graph fork = task_graph({1, 4, 4, 4, 1}, {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}});
  CHECK(solve_identical_exact(fork, costs_of(fork), 3).makespan == 6);
  // The same on two processors: 1 + 8 + 1.
  CHECK(solve_identical_exact(fork, costs_of(fork), 2).makespan == 10);
}

TEST_CASE("exact solver and lower bounds agree with a time-step brute force", "[tuner]") {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const int n = 5 + static_cast<int>(seed % 3);  // 5..7 tasks
    Graph g = random_small(seed, n, 4);
    for (int procs : {2, 3}) {
      const int brute = TimeStepBruteForce(g, procs).solve();
      const ExactSchedule exact = solve_identical_exact(g, costs_of(g), procs);
      INFO("seed " << seed << " procs " << procs);
      REQUIRE(exact.proven);
      CHECK(exact.makespan == brute);
      const IdenticalBounds b = identical_lower_bounds(g, costs_of(g), procs);
      CHECK(b.best() <= brute);
      // The schedule it returns is feasible and has that makespan.
      double end = 0;
      for (OpId op = 0; op < g.size(); ++op) {
        end = std::max(end, exact.start[op] + g.cost(op));
        for (OpId p : g.preds(op)) CHECK(exact.start[p] + g.cost(p) <= exact.start[op]);
        for (OpId other = 0; other < op; ++other)
          if (exact.machine[other] == exact.machine[op])
            CHECK((exact.start[other] + g.cost(other) <= exact.start[op] ||
                   exact.start[op] + g.cost(op) <= exact.start[other]));
      }
      CHECK(end == exact.makespan);
      ++checked;
    }
  }
  CHECK(checked == 60);
}

TEST_CASE("lower bounds: the classic ones by formula, never above the optimum", "[tuner]") {
  // Chain of 5 next to 6 independent tasks of 1 on 2 processors: critical path 5, work 11/2 -> 6.
  Graph g = task_graph({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  const IdenticalBounds b = identical_lower_bounds(g, costs_of(g), 2);
  CHECK(b.critical_path == 5);
  CHECK(b.work == 6);
  CHECK(b.best() == 6);
  // Generated 20-task graphs: every bound at most the proven optimum.
  for (int k = 0; k < 8; ++k) {
    auto graph = make_workload("stg-random:tasks=16,method=" + std::to_string(k % 4) + ",pred=2,width=4,seed=" +
                               std::to_string(k + 1));
    REQUIRE(graph.ok());
    for (int procs : {2, 3, 4}) {
      const ExactSchedule exact = solve_identical_exact(graph.value(), costs_of(graph.value()), procs);
      REQUIRE(exact.proven);
      CHECK(identical_lower_bounds(graph.value(), costs_of(graph.value()), procs).best() <= exact.makespan);
    }
  }
}

TEST_CASE("stg-random graphs are deterministic per seed and have the stated shape", "[tuner]") {
  for (int method = 0; method < 4; ++method) {
    const std::string spec = "stg-random:tasks=100,method=" + std::to_string(method) + ",pred=3,seed=7";
    Graph a = make_workload(spec).value(), b = make_workload(spec).value();
    Graph c = make_workload("stg-random:tasks=100,method=" + std::to_string(method) + ",pred=3,seed=8").value();
    INFO(spec);
    REQUIRE(a.size() == 100);
    REQUIRE(a.num_edges() == b.num_edges());
    bool same = true;
    for (OpId op = 0; op < a.size(); ++op) same &= a.cost(op) == b.cost(op) && a.preds(op).size() == b.preds(op).size();
    for (EdgeId e = 0; e < a.num_edges(); ++e) same &= a.edge_src(e) == b.edge_src(e) && a.edge_dst(e) == b.edge_dst(e);
    CHECK(same);
    bool differs = a.num_edges() != c.num_edges();
    for (OpId op = 0; op < a.size() && !differs; ++op) differs = a.cost(op) != c.cost(op);
    CHECK(differs);
    std::map<int, int> costs;
    for (OpId op = 0; op < a.size(); ++op) {
      CHECK(a.cost(op) == std::floor(a.cost(op)));
      costs[static_cast<int>(a.cost(op))]++;
      for (OpId p : a.preds(op)) CHECK(p < op);  // tasks numbered in topological order
    }
    CHECK(costs.begin()->first >= 1);
    CHECK(costs.rbegin()->first <= 10);
    CHECK(costs.size() >= 8);  // 100 draws from 10 values
    // Mean predecessors near `pred` (3): exactly 3 for layrpred except in the first layer.
    const double mean = static_cast<double>(a.num_edges()) / a.size();
    CHECK(mean > 1.8);
    CHECK(mean < 4.2);
    if (method == 3) {
      for (OpId op = 0; op < a.size(); ++op) CHECK(a.preds(op).size() <= 3);
    }
  }
}

TEST_CASE("list schedules run unchanged on the simulator", "[tuner]") {
  std::mt19937_64 rng(5);
  for (int k = 0; k < 12; ++k) {
    Graph g = make_workload("stg-random:tasks=60,method=" + std::to_string(k % 4) + ",pred=" +
                            std::to_string(1 + k % 5) + ",seed=" + std::to_string(k)).value();
    for (int procs : {2, 3, 8}) {
      Cluster c = Cluster::identical(procs).value();
      CostTable costs(g, c);
      SimOptions options;
      options.dispatch = Dispatch::priority;
      const PlacementProblem problem{g, c, costs, options};
      REQUIRE(is_identical_without_communication(problem));
      ListDecoder decoder(g, op_durations(problem), procs);
      Simulator sim(g, costs, c, options);
      std::vector<std::int32_t> rank(g.size());
      std::iota(rank.begin(), rank.end(), 0);
      for (int trial = 0; trial < 5; ++trial) {
        std::shuffle(rank.begin(), rank.end(), rng);
        const double listed = decoder.decode(rank.data());
        Placement p{decoder.machine(), std::vector<double>(g.size())};
        for (OpId op = 0; op < g.size(); ++op) p.priority[op] = -rank[op];
        CHECK(sim.makespan(p) == listed);
      }
    }
  }
  // Not the identical case: communication, several streams, FIFO dispatch is still fine to detect.
  Graph g = make_workload("random:ops=20").value();
  Cluster pcie = Cluster::load("4xP100-pcie").value();
  CostTable costs(g, pcie);
  SimOptions options;
  options.dispatch = Dispatch::priority;
  CHECK_FALSE(is_identical_without_communication(PlacementProblem{g, pcie, costs, options}));
  // Free transfers, but each of the other conditions broken in turn.
  Graph stg = make_workload("stg-random:tasks=20").value();
  Cluster free4 = Cluster::identical(4).value();
  CostTable free_costs(stg, free4);
  REQUIRE(is_identical_without_communication(PlacementProblem{stg, free4, free_costs, options}));
  SimOptions two_streams = options, noisy = options, fixed = options, doppler = options;
  two_streams.streams = 2;
  noisy.noise_sigma = 0.1;
  fixed.dispatch = Dispatch::fixed_order;
  doppler.doppler = true;
  for (const SimOptions& o : {two_streams, noisy, fixed, doppler})
    CHECK_FALSE(is_identical_without_communication(PlacementProblem{stg, free4, free_costs, o}));
  // Devices of one host that slow each other down (a co-run slowdown in the profiles).
  ProfileTable beside;
  beside.add_co_run_slowdown(free4.device(0).kind, 1.2);
  CostTable slowed(stg, free4, &beside);
  CHECK_FALSE(is_identical_without_communication(PlacementProblem{stg, free4, slowed, options}));
  std::vector<Device> mixed = free4.devices();
  mixed[3].peak_flops *= 2;  // ops with roofline costs run at another speed there
  mixed[3].kind = "fast";
  Graph roofline = make_workload("random:ops=20").value();
  Cluster uneven("uneven", mixed);
  CostTable uneven_costs(roofline, uneven);
  CHECK_FALSE(is_identical_without_communication(PlacementProblem{roofline, uneven, uneven_costs, options}));
}

TEST_CASE("search reaches the proven optimum on small generated graphs", "[tuner]") {
  int reached = 0, instances = 0;
  for (int k = 0; k < 6; ++k) {
    Graph g = make_workload("stg-random:tasks=18,method=" + std::to_string(k % 4) + ",pred=" +
                            std::to_string(2 + k % 3) + ",width=5,seed=" + std::to_string(100 + k)).value();
    for (int procs : {2, 3, 4}) {
      const ExactSchedule exact = solve_identical_exact(g, costs_of(g), procs);
      REQUIRE(exact.proven);
      Cluster c = Cluster::identical(procs).value();
      CostTable costs(g, c);
      SimOptions options;
      options.dispatch = Dispatch::priority;
      const PlacementProblem problem{g, c, costs, options};
      SearchBudget budget;
      budget.seconds = 0;
      budget.evaluations = 20000;
      budget.seed = 3;
      const PlacementOutcome found = place_search(problem, budget);
      INFO("graph " << k << " on " << procs << ": optimum " << exact.makespan << ", search " << found.makespan);
      CHECK(found.makespan >= exact.makespan);
      CHECK(found.makespan == exact.makespan);
      CHECK(found.evaluations == 20000);
      ++instances;
      reached += found.makespan == exact.makespan;
    }
  }
  CHECK(instances == 18);
}
