#pragma once
// `gantry bench tune`: evaluations per second of a tuning job with 1, 2, ... rollout actors.
// Rollouts must scale: they share nothing but the tuner's messages and the store's queue.
#include <string>
#include <vector>

namespace gantry {

struct TuneBenchOptions {
  std::string workload = "llama-layer";
  std::string cluster = "4xP100-pcie";
  std::vector<int> rollouts = {1, 2};
  double seconds = 5;  // per configuration
  int repeats = 3;     // the median of these is reported
};

struct TuneBenchRow {
  int rollouts = 0;
  double evals_per_second = 0;  // median over repeats
  std::vector<double> samples;
  double speedup = 1;           // vs the first configuration
};

std::vector<TuneBenchRow> run_tune_bench(const TuneBenchOptions& options);

}  // namespace gantry
