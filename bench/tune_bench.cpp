#include "bench/tune_bench.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "actors/tune_job.hpp"
#include "workloads/workload.hpp"

namespace gantry {

std::vector<TuneBenchRow> run_tune_bench(const TuneBenchOptions& options) {
  auto graph = make_workload(options.workload);
  if (!graph) throw std::runtime_error(graph.error().message);
  auto cluster = Cluster::load(options.cluster);
  if (!cluster) throw std::runtime_error(cluster.error().message);
  CostTable costs(graph.value(), cluster.value());
  const TuneProblem problem{graph.value(), cluster.value(), costs, SimOptions{}, options.workload, ""};

  std::vector<TuneBenchRow> rows;
  for (int rollouts : options.rollouts) {
    TuneBenchRow row;
    row.rollouts = rollouts;
    for (int r = 0; r < std::max(1, options.repeats); ++r) {
      char tmpl[] = "/tmp/gantry-bench-tune-XXXXXX";
      if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("cannot create a temporary directory under /tmp");
      const std::string dir = tmpl;
      TuneOptions o;
      o.data_dir = dir;
      o.rollouts = rollouts;
      o.budget_seconds = options.seconds;
      o.seed = static_cast<std::uint64_t>(r + 1);
      auto outcome = run_tune_job(problem, o);
      std::filesystem::remove_all(dir);
      if (!outcome) throw std::runtime_error(outcome.error().message);
      row.samples.push_back(outcome.value().evaluations / outcome.value().seconds);
    }
    std::vector<double> sorted = row.samples;
    std::sort(sorted.begin(), sorted.end());
    row.evals_per_second = sorted[sorted.size() / 2];
    row.speedup = rows.empty() ? 1.0 : row.evals_per_second / rows.front().evals_per_second;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace gantry
