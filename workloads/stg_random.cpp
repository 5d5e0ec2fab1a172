// Random task graphs in the manner of the Standard Task Graph Set (Tobita & Kasahara, J.
// Scheduling 5(5), 2002): integer task costs and random precedence, no communication, meant for
// identical processors. Tasks are numbered in a topological order; edges only go forward.
// Precedence methods (`method`):
//   0 sameprob: each pair i < j is an edge with the same probability, pred * 2 / (tasks - 1), so a
//     task has `pred` predecessors on average;
//   1 samepred: task j draws its predecessor count uniformly from [0, min(j, 2 * pred)] and takes
//     that many distinct earlier tasks;
//   2 layrprob: tasks are dealt to layers (every layer non-empty; `width` tasks per layer on
//     average); each task of an earlier layer is a predecessor with one probability chosen so that
//     a task has `pred` predecessors on average;
//   3 layrpred: as layrprob, but each task takes min(pred, tasks in earlier layers) distinct
//     predecessors from the earlier layers.
// Costs are uniform integers in [cost_min, cost_max]. The draws are computed by hand from
// std::mt19937_64 (fully specified by the standard), so a seed gives the same graph everywhere.
#include <algorithm>
#include <unordered_map>
#include <cmath>
#include <random>

#include "workloads/generators.hpp"
#include "workloads/seeded_rng.hpp"

namespace gantry {

namespace {

using namespace workload_detail;

using Rng = SeededRng;

struct StgShape {
  std::int64_t tasks = 100;
  int method = 0;
  double pred = 3;
  double width = 10;
  std::int64_t cost_min = 1, cost_max = 10;
  std::uint64_t seed = 1;
};

// `count` distinct values of [0, n) in increasing order: a partial Fisher-Yates shuffle of
// 0..n-1 whose swapped entries live in a map, so a task costs O(count), not O(n).
std::vector<std::int64_t> distinct_below(Rng& rng, std::int64_t n, std::int64_t count) {
  std::unordered_map<std::int64_t, std::int64_t> moved;  // pool[i] where it differs from i
  auto at = [&](std::int64_t i) {
    auto it = moved.find(i);
    return it == moved.end() ? i : it->second;
  };
  std::vector<std::int64_t> picked;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t j = i + rng.below(n - i);
    const std::int64_t value = at(j);
    moved[j] = at(i);
    picked.push_back(value);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

Result<Graph> build(const StgShape& s) {
  Rng rng(s.seed);
  const std::int64_t n = s.tasks;
  std::vector<std::int64_t> cost(static_cast<std::size_t>(n));
  for (auto& c : cost) c = s.cost_min + rng.below(s.cost_max - s.cost_min + 1);

  // layer_start[l]: first task of layer l (layered methods); the unlayered ones use one task per layer.
  std::vector<std::int64_t> layer_start;
  const bool layered = s.method >= 2;
  if (layered) {
    const std::int64_t layers = std::clamp<std::int64_t>(std::llround(static_cast<double>(n) / s.width), 1, n);
    layer_start = random_layer_starts(rng, n, layers);
  } else {
    for (std::int64_t i = 0; i <= n; ++i) layer_start.push_back(i);
  }
  // Tasks in the layers before task j's: its candidate predecessors are 0 .. earlier(j) - 1.
  std::vector<std::int64_t> earlier(static_cast<std::size_t>(n));
  for (std::size_t l = 0; l + 1 < layer_start.size(); ++l)
    for (std::int64_t j = layer_start[l]; j < layer_start[l + 1]; ++j) earlier[j] = layer_start[l];

  double edge_prob = 0;
  if (s.method == 0 || s.method == 2) {
    double candidates = 0;
    for (std::int64_t j = 0; j < n; ++j) candidates += static_cast<double>(earlier[j]);
    edge_prob = candidates > 0 ? std::min(1.0, s.pred * static_cast<double>(n) / candidates) : 0;
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t m = earlier[j];
    if (s.method == 0 || s.method == 2) {
      for (std::int64_t i = 0; i < m; ++i)
        if (rng.uniform() < edge_prob) edges.emplace_back(i, j);
    } else {
      std::int64_t count = 0;
      if (s.method == 1) {
        const std::int64_t most = std::min<std::int64_t>(m, std::llround(2 * s.pred));
        count = rng.below(most + 1);
      } else {
        count = std::min<std::int64_t>(m, std::llround(s.pred));
      }
      for (std::int64_t i : distinct_below(rng, m, count)) edges.emplace_back(i, j);
    }
  }

  GraphBuilder graph("stg-random", "units");
  for (std::int64_t j = 0; j < n; ++j) {
    OpSpec op;
    op.name = "t" + std::to_string(j + 1);
    op.cost = static_cast<double>(cost[j]);
    graph.add_op(std::move(op));
  }
  for (const auto& [src, dst] : edges) graph.add_edge(static_cast<OpId>(src), static_cast<OpId>(dst));
  return graph.build();
}

}  // namespace

WorkloadInfo stg_random_info() {
  return {"stg-random",
          "STG-like random task graph (Tobita & Kasahara): integer costs uniform in [cost_min, cost_max], "
          "no communication; method 0 sameprob, 1 samepred, 2 layrprob, 3 layrpred; pred = mean "
          "predecessors per task; width = mean layer width (layered methods); deterministic per seed",
          "tasks=100 method=0 pred=3 width=10 cost_min=1 cost_max=10 seed=1"};
}

Result<Graph> make_stg_random(const WorkloadParams& given) {
  const WorkloadParams p = named(given, "stg-random");
  StgShape s;
  auto tasks = p.get_int("tasks", 100, 1, 100000);
  if (!tasks) return tasks.error();
  s.tasks = tasks.value();
  auto method = p.get_int("method", 0, 0, 3);
  if (!method) return method.error();
  s.method = static_cast<int>(method.value());
  auto pred = p.get_real("pred", 3, 0, 1000);
  if (!pred) return pred.error();
  s.pred = pred.value();
  auto width = p.get_real("width", 10, 1, 100000);
  if (!width) return width.error();
  s.width = width.value();
  auto cost_min = p.get_int("cost_min", 1, 0, 1000000);
  if (!cost_min) return cost_min.error();
  auto cost_max = p.get_int("cost_max", 10, cost_min.value(), 1000000);
  if (!cost_max) return cost_max.error();
  s.cost_min = cost_min.value();
  s.cost_max = cost_max.value();
  auto seed = p.get_int("seed", 1, 0, (std::int64_t{1} << 53) - 1);
  if (!seed) return seed.error();
  s.seed = static_cast<std::uint64_t>(seed.value());
  // Dense methods can draw up to tasks^2 / 2 edges.
  const double n = static_cast<double>(s.tasks);
  auto budget = check_budget(p, n, std::min(n * (n - 1) / 2, n * (2 * s.pred + 1)));
  if (!budget) return budget.error();
  return build(s);
}

}  // namespace gantry
