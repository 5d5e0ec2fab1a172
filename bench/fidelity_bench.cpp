#include "bench/fidelity_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "bench/error_summary.hpp"
#include "bench/median.hpp"
#include "core/cost_model.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/profiler.hpp"
#include "sim/simulator.hpp"
#include "tuner/placement_method.hpp"
#include "workloads/workload.hpp"

namespace gantry {

namespace {

Graph make_graph(const std::string& spec) {
  auto g = make_workload(spec);
  if (!g) throw std::runtime_error(spec + ": " + g.error().message);
  return std::move(g).value();
}

std::vector<std::pair<std::string, Graph>> profile_graphs(const FidelityOptions& o) {
  std::vector<std::string> specs;
  if (o.profile == "grid" || o.profile == "both") specs = default_profile_workloads();
  if (o.profile == "graphs" || o.profile == "both") specs.insert(specs.end(), o.graphs.begin(), o.graphs.end());
  if (specs.empty()) throw std::runtime_error("--profile: '" + o.profile + "' is not grid, graphs or both");
  std::vector<std::pair<std::string, Graph>> graphs;
  for (const std::string& spec : specs) graphs.emplace_back(spec, make_graph(spec));
  return graphs;
}

// The placements measured per graph: random ones, the heuristics, and search on the calibrated model.
std::vector<std::pair<std::string, Placement>> placements(const PlacementProblem& problem, const FidelityOptions& o) {
  std::vector<std::pair<std::string, Placement>> out;
  SearchBudget budget;
  budget.seconds = o.search_seconds;
  for (const char* method : {"single", "round-robin", "cp", "heft", "search"}) {
    auto placed = run_placement_method(method, problem, budget);
    if (!placed) throw std::runtime_error(std::string(method) + ": " + placed.error().message);
    out.emplace_back(method, placed.value().placement);
  }
  for (int k = 0; k < o.random_placements; ++k) {
    budget.seed = static_cast<std::uint64_t>(k + 1);
    auto placed = run_placement_method("random", problem, budget);
    if (!placed) throw std::runtime_error("random: " + placed.error().message);
    out.emplace_back("random " + std::to_string(k + 1), placed.value().placement);
  }
  return out;
}

// Rounds 1, 3, 5, ... against rounds 2, 4, ...: how far two measurements of one placement differ.
double half_against_half(const std::vector<double>& rounds) {
  std::vector<double> odd, even;
  for (std::size_t r = 0; r < rounds.size(); ++r) (r % 2 ? even : odd).push_back(rounds[r]);
  if (odd.empty() || even.empty()) return 0;
  return median(odd) / median(even) - 1;
}


}  // namespace

FidelityReport run_fidelity_bench(const FidelityOptions& o) {
  auto cluster = Cluster::load(o.cluster);
  if (!cluster) throw std::runtime_error(cluster.error().message);
  FidelityReport report;
  ProfilerOptions profiler;
  profiler.exec.repeats = o.repeats;
  const auto start = std::chrono::steady_clock::now();
  if (o.progress) o.progress("profiling (" + o.profile + ")");
  auto profiles = profile_cluster(cluster.value(), profile_graphs(o), profiler);
  if (!profiles) throw std::runtime_error(profiles.error().message);
  report.profile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.profile_signatures = static_cast<int>(measured_signatures(profiles.value()));
  report.co_run_slowdown = profiles.value().co_run_slowdown(cluster.value().device(0).kind);

  // Every placement is measured once per round, round after round: a burst of interference from
  // other tenants of the machine then slows one run of many placements, not every run of one.
  struct Case {
    std::size_t graph;
    std::string name;
    Placement placement;
    double predicted, roofline;
    std::vector<double> makespans;
  };
  std::vector<Graph> graphs;
  std::vector<Case> cases;
  for (const std::string& spec : o.graphs) graphs.push_back(make_graph(spec));
  for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
    const Graph& graph = graphs[gi];
    const CostTable calibrated(graph, cluster.value(), &profiles.value()), roofline(graph, cluster.value());
    const PlacementProblem problem{graph, cluster.value(), calibrated, SimOptions{}};
    Simulator predict(graph, calibrated, cluster.value()), uncalibrated(graph, roofline, cluster.value());
    for (auto& [name, placement] : placements(problem, o))
      cases.push_back({gi, name, placement, predict.makespan(placement), uncalibrated.makespan(placement), {}});
  }
  for (int round = 0; round < o.repeats; ++round)
    for (Case& c : cases) {
      if (o.progress) o.progress("round " + std::to_string(round + 1) + ": " + o.graphs[c.graph] + " " + c.name);
      ExecOptions exec;
      exec.repeats = 1;
      exec.warmup = round == 0 ? 1 : 0;
      auto m = execute_on_cpu(graphs[c.graph], c.placement, cluster.value(), exec);
      if (!m) throw std::runtime_error(o.graphs[c.graph] + " " + c.name + ": " + m.error().message);
      c.makespans.push_back(m.value().median);
    }
  std::vector<double> errors, roofline_errors, noise;
  for (Case& c : cases) {
    noise.push_back(half_against_half(c.makespans));  // in round order
    const double measured = median(c.makespans);
    const auto [low, high] = std::minmax_element(c.makespans.begin(), c.makespans.end());
    FidelityRow row{o.graphs[c.graph], c.name, measured, (*high - *low) / measured, c.predicted, c.roofline};
    errors.push_back(row.error());
    roofline_errors.push_back(row.roofline / row.measured - 1);
    report.rows.push_back(row);
  }
  std::tie(report.mean_error, report.p90_error) = mean_and_p90(errors);
  std::tie(report.roofline_mean_error, report.roofline_p90_error) = mean_and_p90(roofline_errors);
  std::tie(report.noise_mean_error, report.noise_p90_error) = mean_and_p90(noise);
  return report;
}

}  // namespace gantry
