#pragma once
// `gantry bench stg`: placement quality on task graphs for identical processors without
// communication. By default against the published optima of the Standard Task Graph Set
// (50 tasks); with other task counts (or `generated`) on STG-like graphs from the `stg-random`
// workload, against the exact optimum where the branch-and-bound solver proves one and else
// against the best proven lower bound.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gantry {

struct StgBenchOptions {
  std::string data_dir;              // holds 50/*.stg and optimal/Case50_P_OPT.csv
  std::vector<int> processors = {2, 4, 8, 16};
  std::vector<std::string> methods = {"heft", "cp", "search"};
  double budget_seconds = 2.0;       // per graph, for search
  int limit = 0;                     // graphs per processor count (0 = all)
  int tasks = 50;                    // 50: the published set (unless `generated`); else generated
  bool generated = false;
  int count = 40;                    // generated graphs per processor count
  std::uint64_t seed = 1;            // of the generated set
  int exact_max_tasks = 30;          // generated graphs up to this size get the exact solver
  long exact_node_limit = 2000000;
  std::function<void(const std::string&)> progress;
};

struct StgBenchRow {
  std::string method;
  int processors = 0, graphs = 0;
  double mean_gap = 0;    // mean of (makespan - reference) / reference over the graphs compared
  double max_gap = 0;
  int optimal = 0;        // graphs solved to the reference (then proven optimal)
  int below_bound = 0;    // makespans below a proven optimum or lower bound: must be 0
  int vs_lower_bound = 0; // graphs whose reference is only a lower bound (optimum unknown)
};

// The generated set: graph k of `count` is `stg-random` with method k % 4 and parameters drawn
// from `seed` and k, so the set is the same everywhere.
std::string stg_generated_spec(int tasks, int k, std::uint64_t seed);

std::vector<StgBenchRow> run_stg_bench(const StgBenchOptions& options);

}  // namespace gantry
