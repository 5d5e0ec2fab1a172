#pragma once
// `gantry bench pipeline`: time to simulate one pipeline scheme (p stages, m microbatches, 1F1B
// and ZB) on one core, two ways: the full path a report takes (compile a Graph, simulate with the
// timeline, metrics) and the search loop's evaluator (structure compiled once, costs changed
// between evaluations, no timeline); and the list scheduler that plans the orders of the tuner's
// candidates, on 3 stages per device with a binding memory limit and offload.
#include <string>
#include <utility>
#include <vector>

namespace gantry {

struct PipelineBenchRow {
  std::string schedule;
  std::string engine;  // "full", "evaluator" or "list scheduler"
  int stages = 0, microbatches = 0, ops = 0, runs = 0;
  double median_ms = 0, min_ms = 0;
  double evaluations_per_second() const { return median_ms > 0 ? 1000 / median_ms : 0; }
};

std::vector<PipelineBenchRow> run_pipeline_bench(const std::vector<std::pair<int, int>>& sizes, double seconds_per_case);

}  // namespace gantry
