#include "bench/sim_bench.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>

#include "core/cost_model.hpp"
#include "sim/simulator.hpp"
#include "workloads/workload.hpp"

namespace gantry {

std::vector<SimBenchRow> run_sim_bench(const SimBenchOptions& options) {
  auto cluster = Cluster::load(options.cluster);
  if (!cluster) throw std::runtime_error(cluster.error().message);
  std::vector<SimBenchRow> rows;
  for (int size : options.sizes) {
    auto graph = make_workload("random:ops=" + std::to_string(size), 42);
    if (!graph) throw std::runtime_error(graph.error().message);
    const Graph& g = graph.value();
    CostTable costs(g, cluster.value());
    SimOptions sim_options;
    sim_options.doppler = options.doppler;
    Simulator sim(g, costs, cluster.value(), sim_options);
    std::mt19937_64 rng(7);
    Placement placement;
    for (int i = 0; i < g.size(); ++i) placement.device.push_back(static_cast<std::int32_t>(rng() % cluster.value().size()));

    std::vector<double> micros;
    const auto begin = std::chrono::steady_clock::now();
    double sink = 0;
    for (;;) {
      const auto t0 = std::chrono::steady_clock::now();
      sink += sim.makespan(placement);
      const auto t1 = std::chrono::steady_clock::now();
      micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      const double elapsed = std::chrono::duration<double>(t1 - begin).count();
      if (micros.size() >= 5 && elapsed >= options.seconds_per_size) break;
    }
    if (sink < 0) throw std::logic_error("negative makespan");  // keeps the runs from being optimised away
    std::sort(micros.begin(), micros.end());
    SimBenchRow row;
    row.ops = g.size();
    row.edges = g.num_edges();
    row.devices = cluster.value().size();
    row.runs = static_cast<int>(micros.size());
    row.median_us = micros[micros.size() / 2];
    row.min_us = micros.front();
    row.max_us = micros.back();
    row.ops_per_second = g.size() / (row.median_us * 1e-6);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace gantry
