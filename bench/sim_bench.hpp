#pragma once
// `gantry bench sim`: simulator throughput on random layered graphs (1k, 10k, 100k ops) placed
// uniformly at random on 8 devices. Reports the median over repeated runs.
#include <string>
#include <vector>

namespace gantry {

struct SimBenchRow {
  int ops = 0, edges = 0, devices = 0, runs = 0;
  double median_us = 0;        // per simulation
  double ops_per_second = 0;   // simulated ops per second (median)
  double min_us = 0, max_us = 0;
};

struct SimBenchOptions {
  std::vector<int> sizes = {1000, 10000, 100000};
  std::string cluster = "8xH100-nvswitch";
  double seconds_per_size = 2.0;  // keep repeating until this much time has passed (min 5 runs)
  bool doppler = false;
};

std::vector<SimBenchRow> run_sim_bench(const SimBenchOptions& options);

}  // namespace gantry
