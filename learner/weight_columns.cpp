#include "learner/weight_columns.hpp"

#include <algorithm>
#include <cmath>

namespace gantry {

WeightColumns::WeightColumns(const WeightTensor& w, int col, int cols) : rows_(static_cast<int>(w.shape[0])), cols_(cols) {
  const auto stride = static_cast<std::size_t>(w.shape[1]);
  t_.resize(static_cast<std::size_t>(cols) * rows_);
  for (int r = 0; r < rows_; ++r)
    for (int c = 0; c < cols; ++c) t_[static_cast<std::size_t>(c) * rows_ + r] = w.data[r * stride + col + c];
  finite_ = std::all_of(t_.begin(), t_.end(), [](float x) { return std::isfinite(x); });
}

void WeightColumns::multiply(const float* x, int x_stride, int n, float* y, int y_stride, const float* bias) const {
  for (int v = 0; v < n; ++v) {
    const float* in = x + static_cast<std::size_t>(v) * x_stride;
    float* out = y + static_cast<std::size_t>(v) * y_stride;
    for (int r = 0; r < rows_; ++r) out[r] = bias ? bias[r] : 0.0f;
    for (int c = 0; c < cols_; ++c) {
      const float xc = in[c];
      if (xc == 0.0f && finite_) continue;  // ReLU's zeros add nothing
      const float* wc = &t_[static_cast<std::size_t>(c) * rows_];
#pragma omp simd  // -fopenmp-simd: vectorized without an OpenMP runtime
      for (int r = 0; r < rows_; ++r) out[r] += xc * wc[r];
    }
  }
}

}  // namespace gantry
