#pragma once
// What an op computes, so that an executor can run it for real: a function from a fixed set (the
// pieces the generators' block decompositions need), a dtype, the operands in order and numeric
// attributes. An operand is an incoming edge (the edge's `slot` is the operand's position) or a
// named graph tensor: a parameter (weights) or a graph input. A named tensor's values are a
// deterministic function of its name and shape (normal values times `scale`, or integers in
// [0, scale) for token ids), so every process rebuilds the same tensor. Any operand may be sliced
// (per dimension [begin, end)). Ops without an operation run a proxy GEMM of their flops.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace gantry {

enum class TensorFn : std::uint8_t {
  matmul,     // a . b (torch.matmul: leading dimensions broadcast)
  add,        // the sum of all operands (one operand: a copy)
  relu,       // max(x, 0)
  rmsnorm,    // x / sqrt(mean(x^2, last) + eps) * weight; attrs eps
  rope,       // rotary embedding of x [batch, rows, heads * head_dim]; attrs heads, position, theta
  silu_mul,   // silu(gate) * up
  attention,  // causal attention: q, then (k_i, v_i) pairs of consecutive key blocks from position 0;
              // attrs heads, position (q's first row); out [batch, rows, heads * head_dim]
  scores,     // q . concat(k_i)^T / sqrt(head_dim), future keys masked to -inf; attrs heads, position;
              // out [batch, heads, rows, keys]
  softmax,    // softmax over the last dimension
  pv,         // p [batch, heads, rows, keys] . concat(v_i); attrs heads; out [batch, rows, heads * head_dim]
  embedding,  // rows of table (operand 1) picked by integer ids (operand 0)
  xent_part,  // per token of logits [batch, rows, slice] and integer targets [batch, rows]: max,
              // sum of exp(logit - max) and the target's logit when it falls in the slice (else 0);
              // attrs offset (vocab index of the slice's first column); out [batch, rows, 3]
  xent,       // per-token cross-entropy from the parts of every vocab slice; out [batch, rows]
  mean,       // mean of every element of every operand; out [1]
};
constexpr int kTensorFnCount = static_cast<int>(TensorFn::mean) + 1;

enum class DType : std::uint8_t { f32, bf16, f64 };

struct SliceRange {
  int dim = 0;
  std::int64_t begin = 0, end = 0;  // [begin, end)
  bool operator==(const SliceRange& o) const { return dim == o.dim && begin == o.begin && end == o.end; }
};

struct Operand {
  enum class Source : std::uint8_t { edge, parameter, input };
  Source source = Source::edge;
  std::string name;                 // parameter / input: what names its values
  std::vector<std::int64_t> shape;  // parameter / input: the whole tensor's shape
  double scale = 1;                 // standard deviation of the values; for integer inputs their count
  bool integer = false;             // integer input (token ids in [0, scale))
  std::vector<SliceRange> slices;   // applied in order; empty = the whole tensor

  static Operand edge(std::vector<SliceRange> slices = {});
  static Operand parameter(std::string name, std::vector<std::int64_t> shape, double scale,
                           std::vector<SliceRange> slices = {});
  static Operand input(std::string name, std::vector<std::int64_t> shape, std::vector<SliceRange> slices = {});
  static Operand token_ids(std::string name, std::vector<std::int64_t> shape, std::int64_t count,
                           std::vector<SliceRange> slices = {});
  bool operator==(const Operand& o) const;
};

struct Operation {
  TensorFn fn = TensorFn::add;
  DType dtype = DType::f32;
  std::vector<Operand> operands;
  std::vector<std::pair<std::string, double>> attrs;  // sorted by key (set them with `with`)

  double attr(const std::string& key, double fallback) const;
  Operation& with(std::string key, double value);  // sets or replaces, keeping the keys sorted
  int edge_operands() const;
  bool operator==(const Operation& o) const;
};

const char* to_string(TensorFn fn);
std::optional<TensorFn> parse_tensor_fn(const std::string& text);
// A named operand's shape after its slices (what a kernel, and the device, gets of it).
std::vector<std::int64_t> sliced_shape(const Operand& operand);

const char* to_string(DType dtype);
std::optional<DType> parse_dtype(const std::string& text);
double dtype_bytes(DType dtype);
// The dtype generators use for a `dtype_bytes` parameter: 2 -> bf16, 8 -> f64, anything else f32.
DType dtype_for_bytes(double bytes);

// Operand counts for the function, slice ranges inside named tensors' shapes, positive scales,
// integer operands only where ids are read. The error says what is wrong, not where (the caller
// names the op).
Status check_operation(const Operation& operation);

}  // namespace gantry
