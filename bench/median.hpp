#pragma once
// The median of measured values (the mean of the two middle ones for an even count), what the
// benchmarks report: one run's outlier moves it least.
#include <algorithm>
#include <vector>

namespace gantry {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t k = values.size();
  return k % 2 ? values[k / 2] : (values[k / 2 - 1] + values[k / 2]) / 2;
}

}  // namespace gantry
