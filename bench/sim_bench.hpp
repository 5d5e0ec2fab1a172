#pragma once
// `gantry bench sim`: simulator throughput on random layered graphs (1k, 10k, 100k ops) placed
// uniformly at random on 8 devices, for the default and the DOPPLER-compatible engine in one run.
//
// Each run simulates the next of `placements` different random placements, as search does (every
// evaluation differs). Repeating one placement lets the branch predictor learn a whole small run
// and overstates small graphs: `--placements 1` measures that case.
#include <string>
#include <vector>

namespace gantry {

struct SimBenchRow {
  std::string engine;          // "default" or "doppler"
  int ops = 0, edges = 0, devices = 0, runs = 0;
  double median_us = 0;        // per simulation
  double ops_per_second = 0;   // simulated ops per second (median)
  double min_us = 0, max_us = 0;
};

struct SimBenchOptions {
  std::vector<int> sizes = {1000, 10000, 100000};
  std::vector<std::string> engines = {"default", "doppler"};
  std::string cluster = "8xH100-nvswitch";
  double seconds_per_size = 2.0;  // keep repeating until this much time has passed (min 5 runs)
  int placements = 16;            // distinct random placements cycled through
};

std::vector<SimBenchRow> run_sim_bench(const SimBenchOptions& options);

}  // namespace gantry
