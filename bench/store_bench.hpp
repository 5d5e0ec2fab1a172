#pragma once
// `gantry bench store`: put_if_better throughput and `query best` latency with many schedules.
#include <string>

namespace gantry {

struct StoreBenchOptions {
  long schedules = 100000;  // distinct (graph, runtime) keys stored before measuring queries
  int ops_per_placement = 200;
  long queries = 20000;
  std::string dir;          // empty: a temporary directory, removed afterwards
};

struct StoreBenchResult {
  long schedules = 0;
  double puts_per_second = 0;      // put_if_better of new keys (each one a synced WriteBatch)
  double improving_puts_per_second = 0;  // on existing keys, half of them improvements
  double query_p50_us = 0, query_p99_us = 0, query_max_us = 0;  // best() on random stored keys
  double reopen_query_p50_us = 0, reopen_query_p99_us = 0;  // a read-only secondary, as `gantry query` opens it
};

StoreBenchResult run_store_bench(const StoreBenchOptions& options);

}  // namespace gantry
