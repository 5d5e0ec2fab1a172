#include "bench/stg_bench.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "core/graph_io.hpp"
#include "tuner/placement_method.hpp"
#include "tuner/stg_optima.hpp"

namespace gantry {

std::vector<StgBenchRow> run_stg_bench(const StgBenchOptions& options) {
  std::vector<StgBenchRow> rows;
  for (int procs : options.processors) {
    auto table = read_stg_optima(options.data_dir + "/optimal/Case50_" + std::to_string(procs) + "_OPT.csv");
    if (!table) throw std::runtime_error(table.error().message);
    auto cluster = Cluster::load("identical:" + std::to_string(procs));
    if (!cluster) throw std::runtime_error(cluster.error().message);
    std::map<std::string, StgBenchRow> by_method;
    for (const std::string& m : options.methods) by_method[m] = StgBenchRow{m, procs};
    int count = 0;
    for (const StgOptimum& opt : table.value()) {
      if (options.limit > 0 && count >= options.limit) break;
      ++count;
      auto graph = read_graph_file(options.data_dir + "/" + opt.graph);
      if (!graph) throw std::runtime_error(graph.error().message);
      CostTable costs(graph.value(), cluster.value());
      SimOptions runtime;
      runtime.dispatch = Dispatch::priority;
      const PlacementProblem problem{graph.value(), cluster.value(), costs, runtime};
      SearchBudget budget;
      budget.seconds = options.budget_seconds;
      for (const std::string& m : options.methods) {
        auto outcome = run_placement_method(m, problem, budget);
        if (!outcome) throw std::runtime_error(outcome.error().message);
        StgBenchRow& row = by_method[m];
        const double makespan = outcome.value().makespan;
        if (makespan < opt.lower - 1e-9) ++row.below_bound;
        if (!opt.proven) continue;
        const double gap = (makespan - opt.lower) / opt.lower;
        ++row.graphs;
        row.mean_gap += gap;
        row.max_gap = std::max(row.max_gap, gap);
        if (gap <= 1e-12) ++row.optimal;
      }
      if (options.progress) options.progress(opt.graph + " on " + std::to_string(procs));
    }
    for (const std::string& m : options.methods) {
      StgBenchRow row = by_method[m];
      if (row.graphs > 0) row.mean_gap /= row.graphs;
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace gantry
