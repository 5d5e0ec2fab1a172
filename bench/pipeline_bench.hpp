#pragma once
// `gantry bench pipeline`: time to compile and simulate one pipeline scheme (p stages, m
// microbatches, 1F1B and ZB) on one core.
#include <string>
#include <utility>
#include <vector>

namespace gantry {

struct PipelineBenchRow {
  std::string schedule;
  int stages = 0, microbatches = 0, ops = 0, runs = 0;
  double median_ms = 0, min_ms = 0;
};

std::vector<PipelineBenchRow> run_pipeline_bench(const std::vector<std::pair<int, int>>& sizes, double seconds_per_case);

}  // namespace gantry
