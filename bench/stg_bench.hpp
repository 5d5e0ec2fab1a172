#pragma once
// `gantry bench stg`: placement quality against the published optima of the Standard Task Graph
// Set (50 tasks; identical processors, no communication).
#include <functional>
#include <string>
#include <vector>

namespace gantry {

struct StgBenchOptions {
  std::string data_dir;              // holds 50/*.stg and optimal/Case50_P_OPT.csv
  std::vector<int> processors = {2, 4, 8, 16};
  std::vector<std::string> methods = {"heft", "cp", "search"};
  double budget_seconds = 2.0;       // per graph, for search
  int limit = 0;                     // graphs per processor count (0 = all 180)
  std::function<void(const std::string&)> progress;
};

struct StgBenchRow {
  std::string method;
  int processors = 0, graphs = 0;
  double mean_gap = 0;    // mean of (makespan - opt) / opt over graphs with a proven optimum
  double max_gap = 0;
  int optimal = 0;        // graphs solved to the optimum
  int below_bound = 0;    // makespans below a proven optimum or lower bound: must be 0
};

std::vector<StgBenchRow> run_stg_bench(const StgBenchOptions& options);

}  // namespace gantry
