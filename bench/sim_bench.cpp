#include "bench/sim_bench.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>

#include "core/cost_model.hpp"
#include "sim/simulator.hpp"
#include "workloads/workload.hpp"

namespace gantry {

namespace {

SimBenchRow measure(const Graph& g, const CostTable& costs, const Cluster& cluster, const std::string& engine,
                    const SimBenchOptions& options) {
  SimOptions sim_options;
  sim_options.doppler = engine == "doppler";
  Simulator sim(g, costs, cluster, sim_options);
  std::mt19937_64 rng(7);
  std::vector<std::vector<std::int32_t>> placements(static_cast<std::size_t>(options.placements));
  for (auto& p : placements)
    for (int i = 0; i < g.size(); ++i) p.push_back(static_cast<std::int32_t>(rng() % cluster.size()));

  std::vector<double> micros;
  const auto begin = std::chrono::steady_clock::now();
  double sink = 0;
  for (std::size_t run = 0;; ++run) {
    const std::int32_t* device = placements[run % placements.size()].data();
    const auto t0 = std::chrono::steady_clock::now();
    sink += sim.makespan(device);
    const auto t1 = std::chrono::steady_clock::now();
    micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    const double elapsed = std::chrono::duration<double>(t1 - begin).count();
    if (micros.size() >= std::max<std::size_t>(5, placements.size()) && elapsed >= options.seconds_per_size) break;
  }
  if (sink < 0) throw std::logic_error("negative makespan");  // keeps the runs from being optimised away
  std::sort(micros.begin(), micros.end());
  SimBenchRow row;
  row.engine = engine;
  row.ops = g.size();
  row.edges = g.num_edges();
  row.devices = cluster.size();
  row.runs = static_cast<int>(micros.size());
  row.median_us = micros[micros.size() / 2];
  row.min_us = micros.front();
  row.max_us = micros.back();
  row.ops_per_second = g.size() / (row.median_us * 1e-6);
  return row;
}

}  // namespace

std::vector<SimBenchRow> run_sim_bench(const SimBenchOptions& options) {
  auto cluster = Cluster::load(options.cluster);
  if (!cluster) throw std::runtime_error(cluster.error().message);
  if (options.placements < 1) throw std::runtime_error("bench sim: --placements must be at least 1");
  for (const std::string& engine : options.engines)
    if (engine != "default" && engine != "doppler")
      throw std::runtime_error("bench sim: unknown engine '" + engine + "' (expected default or doppler)");
  std::vector<SimBenchRow> rows;
  for (int size : options.sizes) {
    auto graph = make_workload("random:ops=" + std::to_string(size), 42);
    if (!graph) throw std::runtime_error(graph.error().message);
    CostTable costs(graph.value(), cluster.value());
    for (const std::string& engine : options.engines)
      rows.push_back(measure(graph.value(), costs, cluster.value(), engine, options));
  }
  return rows;
}

}  // namespace gantry
