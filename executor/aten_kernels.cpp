#include "executor/aten_kernels.hpp"

#include <cmath>

#include "executor/named_tensor.hpp"

namespace gantry::aten {

namespace {

// [batch, rows, heads * head_dim] -> [batch, heads, rows, head_dim].
at::Tensor split_heads(const at::Tensor& x, std::int64_t heads) {
  TORCH_CHECK(x.dim() == 3 && x.size(2) % heads == 0, "expected [batch, rows, heads * head_dim] with ", heads,
              " heads, got ", x.sizes());
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

at::Tensor merge_heads(const at::Tensor& x) {  // the inverse of split_heads
  return x.transpose(1, 2).reshape({x.size(0), x.size(2), x.size(1) * x.size(3)});
}

// Operands [first, end) concatenated along the rows (the key blocks of attention), split by head.
at::Tensor key_blocks(const std::vector<at::Tensor>& operands, std::size_t first, std::size_t end, std::size_t step,
                      std::int64_t heads) {
  std::vector<at::Tensor> blocks;
  for (std::size_t i = first; i < end; i += step) blocks.push_back(operands[i]);
  return split_heads(at::cat(blocks, 1), heads);
}

// q . k^T / sqrt(head_dim) with keys after each query's position masked out.
at::Tensor causal_scores(const at::Tensor& q, const at::Tensor& k, double position) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  at::Tensor scores = at::matmul(q, k.transpose(2, 3)) * scale;
  const auto rows = q.size(2), keys = k.size(2);
  auto opts = at::TensorOptions().dtype(at::kLong).device(q.device());
  at::Tensor query_pos = at::arange(rows, opts).unsqueeze(1) + static_cast<std::int64_t>(position);
  at::Tensor key_pos = at::arange(keys, opts).unsqueeze(0);
  return scores.masked_fill(key_pos > query_pos, -std::numeric_limits<double>::infinity());
}

// Rotary embedding, rotate-half convention, on every head of x [batch, rows, heads * head_dim].
at::Tensor rope(const at::Tensor& x, std::int64_t heads, double position, double theta) {
  at::Tensor h = split_heads(x, heads);  // [batch, heads, rows, head_dim]
  const auto head_dim = h.size(3), half = head_dim / 2;
  TORCH_CHECK(head_dim % 2 == 0, "rope needs an even head dimension, got ", head_dim);
  auto f64 = at::TensorOptions().dtype(at::kDouble).device(x.device());
  at::Tensor inv_freq = at::pow(theta, -at::arange(half, f64) * 2.0 / static_cast<double>(head_dim));
  at::Tensor pos = at::arange(h.size(2), f64) + position;
  at::Tensor angle = at::outer(pos, inv_freq);  // [rows, half]
  at::Tensor cos = angle.cos().to(x.scalar_type()), sin = angle.sin().to(x.scalar_type());
  at::Tensor x1 = h.narrow(3, 0, half), x2 = h.narrow(3, half, half);
  return merge_heads(at::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, 3));
}

at::Tensor xent_part(const at::Tensor& logits, const at::Tensor& targets, double offset) {
  at::Tensor max = std::get<0>(logits.max(-1, true));
  at::Tensor sum = (logits - max).exp().sum(-1, true);
  at::Tensor local = targets.to(at::kLong) - static_cast<std::int64_t>(offset);
  at::Tensor inside = (local >= 0) & (local < logits.size(-1));
  at::Tensor picked = logits.gather(-1, local.clamp(0, logits.size(-1) - 1).unsqueeze(-1));
  return at::cat({max, sum, picked * inside.unsqueeze(-1).to(logits.scalar_type())}, -1);
}

// log(sum_p s_p exp(m_p - M)) + M - t, with M the largest part maximum: an exact log-softmax.
at::Tensor xent(const std::vector<at::Tensor>& parts) {
  at::Tensor all = at::stack(parts, 0);  // [parts, batch, rows, 3]
  at::Tensor max = all.select(-1, 0), sum = all.select(-1, 1), target = all.select(-1, 2);
  at::Tensor top = std::get<0>(max.max(0));
  return (sum * (max - top).exp()).sum(0).log() + top - target.sum(0);
}

at::Tensor mean(const std::vector<at::Tensor>& operands) {
  at::Tensor total = at::zeros({1}, operands[0].options());
  std::int64_t count = 0;
  for (const at::Tensor& t : operands) {
    total += t.sum();
    count += t.numel();
  }
  return total / static_cast<double>(count);
}

at::Tensor sum(const std::vector<at::Tensor>& operands) {
  at::Tensor total = operands[0].clone(at::MemoryFormat::Contiguous);
  for (std::size_t i = 1; i < operands.size(); ++i) total += operands[i];
  return total;
}

}  // namespace

at::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return at::kFloat;
    case DType::bf16: return at::kBFloat16;
    case DType::f64: return at::kDouble;
  }
  return at::kFloat;
}

at::Tensor named_tensor(const Operand& operand, DType dtype) {
  std::int64_t count = 1;
  for (std::int64_t extent : operand.shape) count *= extent;
  std::vector<float> values = named_tensor_values(operand.name, count, operand.scale, operand.integer);
  at::Tensor t = at::from_blob(values.data(), operand.shape, at::TensorOptions().dtype(at::kFloat));
  return t.to(operand.integer ? at::kLong : scalar_type(dtype), /*non_blocking=*/false, /*copy=*/true);
}

at::Tensor sliced(at::Tensor tensor, const std::vector<SliceRange>& slices) {
  for (const SliceRange& s : slices) {
    TORCH_CHECK(s.dim < tensor.dim() && s.end <= tensor.size(s.dim), "slice [", s.dim, ", ", s.begin, ", ", s.end,
                ") is outside a tensor of shape ", tensor.sizes());
    tensor = tensor.narrow(s.dim, s.begin, s.end - s.begin);
  }
  return tensor;
}

at::Tensor compute(const Operation& op, const std::vector<at::Tensor>& x) {
  const auto heads = static_cast<std::int64_t>(op.attr("heads", 1));
  switch (op.fn) {
    case TensorFn::matmul: return at::matmul(x[0], x[1]);
    case TensorFn::add: return sum(x);
    case TensorFn::relu: return at::relu(x[0]);
    case TensorFn::rmsnorm:
      return x[0] * at::rsqrt(x[0].pow(2).mean(-1, true) + op.attr("eps", 1e-5)) * x[1];
    case TensorFn::rope: return rope(x[0], heads, op.attr("position", 0), op.attr("theta", 10000));
    case TensorFn::silu_mul: return at::silu(x[0]) * x[1];
    case TensorFn::attention: {
      at::Tensor q = split_heads(x[0], heads);
      at::Tensor k = key_blocks(x, 1, x.size(), 2, heads), v = key_blocks(x, 2, x.size(), 2, heads);
      return merge_heads(at::matmul(at::softmax(causal_scores(q, k, op.attr("position", 0)), -1), v));
    }
    case TensorFn::scores:
      return causal_scores(split_heads(x[0], heads), key_blocks(x, 1, x.size(), 1, heads), op.attr("position", 0));
    case TensorFn::softmax: return at::softmax(x[0], -1);
    case TensorFn::pv: return merge_heads(at::matmul(x[0], key_blocks(x, 1, x.size(), 1, heads)));
    case TensorFn::embedding: return at::embedding(x[1], x[0].to(at::kLong));
    case TensorFn::xent_part: return xent_part(x[0], x[1], op.attr("offset", 0));
    case TensorFn::xent: return xent(x);
    case TensorFn::mean: return mean(x);
  }
  TORCH_CHECK(false, "unknown tensor function");
}

}  // namespace gantry::aten
