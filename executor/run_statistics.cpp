#include "executor/run_statistics.hpp"

#include <algorithm>
#include <numeric>

namespace gantry {

void summarize_runs(std::vector<RunRecord> runs, Measurement* out) {
  out->makespans.clear();
  for (const RunRecord& r : runs) out->makespans.push_back(r.makespan);
  if (runs.empty()) return;
  std::vector<std::size_t> by_time(runs.size());
  std::iota(by_time.begin(), by_time.end(), std::size_t{0});
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](std::size_t a, std::size_t b) { return runs[a].makespan < runs[b].makespan; });
  const std::size_t middle = by_time[(runs.size() - 1) / 2];
  out->min = runs[by_time.front()].makespan;
  out->max = runs[by_time.back()].makespan;
  // The median of an even count is the mean of the two middle runs; the record is the lower one's.
  out->median = runs.size() % 2 ? runs[middle].makespan
                                : (runs[middle].makespan + runs[by_time[runs.size() / 2]].makespan) / 2;
  out->median_run = std::move(runs[middle]);
}

}  // namespace gantry
