#pragma once
// How far predictions are from measurements, summarised as the benchmarks report it: the mean of
// |error| and its 90th percentile (the smallest error that at least 90% of the cases stay within).
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace gantry {

inline std::pair<double, double> mean_and_p90(std::vector<double> errors) {
  if (errors.empty()) return {0, 0};
  double mean = 0;
  for (double& e : errors) {
    e = std::abs(e);
    mean += e / static_cast<double>(errors.size());
  }
  std::sort(errors.begin(), errors.end());
  const auto at = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(errors.size()))) - 1;
  return {mean, errors[std::min(at, errors.size() - 1)]};
}

}  // namespace gantry
