#pragma once
// A slice W[:, col : col + cols] of a policy weight, transposed once, for the rollouts' plain-C++
// layers: y = W x (+ b) for one vector or many at once (the encoder's and the heads' per-op
// layers). Each output accumulates the weight's columns scaled by the input's entries, contiguous
// and vectorized without the horizontal sums of a row-by-row dot product (those made the encoder
// 40% of a rollout request on llama-block).
#include <vector>

#include "learner/policy_weights.hpp"

namespace gantry {

class WeightColumns {
 public:
  WeightColumns() = default;
  WeightColumns(const WeightTensor& w, int col, int cols);

  // y[v] = W x[v] (+ bias) for n vectors, `x_stride` and `y_stride` floats apart; `bias` (rows()
  // floats) may be any array, such as an op's precomputed share of a wider layer.
  void multiply(const float* x, int x_stride, int n, float* y, int y_stride, const float* bias = nullptr) const;
  // y = W x (+ bias).
  void multiply(const float* x, float* y, const float* bias = nullptr) const { multiply(x, cols_, 1, y, rows_, bias); }
  int rows() const { return rows_; }

 private:
  int rows_ = 0, cols_ = 0;
  std::vector<float> t_;  // [cols x rows]
  bool finite_ = true;    // zero inputs may be skipped (0 x inf would be NaN)
};

}  // namespace gantry
