#include "learner/exclusive_prefix_sum.hpp"

#include <stdexcept>

namespace gantry {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Rows of `row` floats, T per block: out[t] = out[t - 1] + in[t - 1] from the first row on
// (forward), or out[t] = out[t + 1] + in[t + 1] from the last row back (backward, reversed).
void scan_rows(const float* in, float* out, std::int64_t blocks, std::int64_t steps, std::int64_t row, bool reverse) {
  for (std::int64_t b = 0; b < blocks; ++b) {
    const float* src = in + b * steps * row;
    float* dst = out + b * steps * row;
    for (std::int64_t k = 0; k < steps; ++k) {
      const std::int64_t t = reverse ? steps - 1 - k : k;
      float* o = dst + t * row;
      if (k == 0) {
        for (std::int64_t i = 0; i < row; ++i) o[i] = 0.0f;
        continue;
      }
      const std::int64_t prev = reverse ? t + 1 : t - 1;
      const float* p = dst + prev * row;
      const float* x = src + prev * row;
      for (std::int64_t i = 0; i < row; ++i) o[i] = p[i] + x[i];
    }
  }
}

Tensor scan(const Tensor& x, bool reverse) {
  if (x.scalar_type() != torch::kFloat || x.dim() < 2 || !x.device().is_cpu())
    throw std::invalid_argument("exclusive_prefix_sum needs a float CPU tensor [B, T, ...]");
  const Tensor in = x.contiguous();
  Tensor out = torch::empty_like(in);
  const std::int64_t blocks = in.size(0), steps = in.size(1);
  const std::int64_t row = steps == 0 || blocks == 0 ? 0 : in.numel() / (blocks * steps);
  scan_rows(in.data_ptr<float>(), out.data_ptr<float>(), blocks, steps, row, reverse);
  return out;
}

struct ExclusivePrefixSum : torch::autograd::Function<ExclusivePrefixSum> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return scan(x, false); }
  // d out[t'] / d x[t] = 1 for every t' > t: the gradient is the exclusive suffix sum. It is
  // computed outside autograd, so it has no gradient of its own (nothing here differentiates twice).
  static tensor_list backward(AutogradContext*, tensor_list grad) { return {scan(grad[0], true)}; }
};

}  // namespace

Tensor exclusive_prefix_sum(const Tensor& x) { return ExclusivePrefixSum::apply(x); }

}  // namespace gantry
