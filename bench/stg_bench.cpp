#include "bench/stg_bench.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

#include "core/graph_io.hpp"
#include "tuner/identical_schedule.hpp"
#include "tuner/placement_method.hpp"
#include "tuner/stg_optima.hpp"
#include "workloads/workload.hpp"

namespace gantry {

namespace {

// One graph of the benchmark with its reference makespan on `processors`.
struct Instance {
  std::string name;
  Graph graph;
  StgOptimum reference;  // proven: the optimum; else `lower` is a lower bound (`upper` unused)
};

std::vector<Instance> published_instances(const StgBenchOptions& options, int procs) {
  auto table = read_stg_optima(options.data_dir + "/optimal/Case50_" + std::to_string(procs) + "_OPT.csv");
  if (!table) throw std::runtime_error(table.error().message);
  std::vector<Instance> out;
  for (const StgOptimum& opt : table.value()) {
    if (options.limit > 0 && static_cast<int>(out.size()) >= options.limit) break;
    auto graph = read_graph_file(options.data_dir + "/" + opt.graph);
    if (!graph) throw std::runtime_error(graph.error().message);
    out.push_back({opt.graph, std::move(graph.value()), opt});
  }
  return out;
}

std::vector<Instance> generated_instances(const StgBenchOptions& options, int procs) {
  const int count = options.limit > 0 ? std::min(options.limit, options.count) : options.count;
  std::vector<Instance> out;
  for (int k = 0; k < count; ++k) {
    const std::string spec = stg_generated_spec(options.tasks, k, options.seed);
    auto graph = make_workload(spec);
    if (!graph) throw std::runtime_error(graph.error().message);
    Instance inst{spec, std::move(graph.value()), {}};
    inst.reference.graph = spec;
    inst.reference.processors = procs;
    std::vector<double> duration(inst.graph.size());
    for (OpId op = 0; op < inst.graph.size(); ++op) duration[op] = inst.graph.cost(op);
    const IdenticalBounds bounds = identical_lower_bounds(inst.graph, duration, procs);
    inst.reference.lower = bounds.best();
    if (inst.graph.size() <= options.exact_max_tasks) {
      const ExactSchedule exact = solve_identical_exact(inst.graph, duration, procs, options.exact_node_limit);
      if (exact.proven) {
        inst.reference.proven = true;
        inst.reference.lower = exact.makespan;
      }
    }
    inst.reference.upper = inst.reference.lower;
    out.push_back(std::move(inst));
  }
  return out;
}

}  // namespace

std::string stg_generated_spec(int tasks, int k, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(k));
  const int method = k % 4;
  double pred = 0;
  if (method == 0 || method == 2) {
    pred = 1 + 0.25 * static_cast<double>(rng() % 13);  // mean predecessors 1 .. 4 (probability methods)
  } else {
    pred = 1 + static_cast<double>(rng() % 19);  // 1 .. 19 (predecessor-count methods)
  }
  std::ostringstream spec;
  spec << "stg-random:tasks=" << tasks << ",method=" << method << ",pred=" << pred << ",width=10,seed="
       << seed * 100000 + static_cast<std::uint64_t>(k);
  return spec.str();
}

std::vector<StgBenchRow> run_stg_bench(const StgBenchOptions& options) {
  std::vector<StgBenchRow> rows;
  const bool generated = options.generated || options.tasks != 50;
  for (int procs : options.processors) {
    auto cluster = Cluster::load("identical:" + std::to_string(procs));
    if (!cluster) throw std::runtime_error(cluster.error().message);
    std::map<std::string, StgBenchRow> by_method;
    for (const std::string& m : options.methods) by_method[m] = StgBenchRow{m, procs};
    const std::vector<Instance> instances =
        generated ? generated_instances(options, procs) : published_instances(options, procs);
    for (const Instance& inst : instances) {
      const StgOptimum& opt = inst.reference;
      CostTable costs(inst.graph, cluster.value());
      SimOptions runtime;
      runtime.dispatch = Dispatch::priority;
      const PlacementProblem problem{inst.graph, cluster.value(), costs, runtime};
      SearchBudget budget;
      budget.seconds = options.budget_seconds;
      for (const std::string& m : options.methods) {
        auto outcome = run_placement_method(m, problem, budget);
        if (!outcome) throw std::runtime_error(outcome.error().message);
        StgBenchRow& row = by_method[m];
        const double makespan = outcome.value().makespan;
        if (makespan < opt.lower - 1e-9) ++row.below_bound;
        // Published rows with only bounds are left out; generated ones compare with their bound.
        if (!opt.proven && !generated) continue;
        if (!opt.proven) ++row.vs_lower_bound;
        const double gap = (makespan - opt.lower) / opt.lower;
        ++row.graphs;
        row.mean_gap += gap;
        row.max_gap = std::max(row.max_gap, gap);
        if (gap <= 1e-12) ++row.optimal;
      }
      if (options.progress) options.progress(inst.name + " on " + std::to_string(procs));
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
