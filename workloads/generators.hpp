#pragma once
// The workload generators, each in its own file, and the block tensor-algebra pieces they share.
// Graph inputs (matrices, weights, token ids) are not ops, as in DOPPLER's graphs, which drop their
// input nodes: an op that reads an input counts it in its bytes but has no edge for it.
// Edges carry the output bytes of their producer: a tensor is shipped whole even when the consumer
// reads a slice of it, which matches the simulator's "one transfer per tensor and device" rule.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.hpp"
#include "core/result.hpp"
#include "workloads/workload.hpp"

namespace gantry {

WorkloadInfo chainmm_info();
Result<Graph> make_chainmm(const WorkloadParams& params);

WorkloadInfo ffnn_info();
Result<Graph> make_ffnn(const WorkloadParams& params);

WorkloadInfo llama_block_info();
Result<Graph> make_llama_block(const WorkloadParams& params);

WorkloadInfo llama_layer_info();
Result<Graph> make_llama_layer(const WorkloadParams& params);

WorkloadInfo random_dag_info();
Result<Graph> make_random_dag(const WorkloadParams& params);

WorkloadInfo stg_random_info();
Result<Graph> make_stg_random(const WorkloadParams& params);

WorkloadInfo op_grid_info();
Result<Graph> make_op_grid(const WorkloadParams& params);

WorkloadInfo link_ladder_info();
Result<Graph> make_link_ladder(const WorkloadParams& params);

// LLaMA transformer dimensions, shared by llama-block and llama-layer.
struct LlamaDims {
  std::int64_t batch = 1;
  std::int64_t seq = 2048;
  std::int64_t hidden = 4096;
  std::int64_t ffn = 11008;
  std::int64_t heads = 32;
  std::int64_t blocks = 4;  // sequence blocks, head groups and MLP column blocks per matmul
  double dtype_bytes = 2;
  bool fused_attention = true;  // one attention op per (block, head group), else scores/softmax/pv

  std::int64_t head_dim() const { return hidden / heads; }
  // Ops that append_llama_block adds.
  double block_ops() const {
    const double b = static_cast<double>(blocks);
    return 4 * b + (fused_attention ? 11 : 13) * b * b;
  }
};

// Reads the parameters common to both LLaMA workloads and checks them.
Result<LlamaDims> read_llama_dims(const WorkloadParams& params);

// Appends one transformer block (rmsnorm, q/k/v, rope, causal attention, output projection,
// residual, rmsnorm, gate/up/down MLP with SiLU, residual). `input_rows` are the ops producing the
// block's input per sequence block, or empty when the input is a graph input. Returns the ops
// producing the block's output per sequence block. Names start with `prefix`.
std::vector<OpId> append_llama_block(GraphBuilder& graph, const LlamaDims& dims,
                                     const std::vector<OpId>& input_rows, const std::string& prefix);

namespace workload_detail {

// Generators refuse sizes that would exhaust memory instead of crashing.
constexpr double kMaxOps = 5e6;
constexpr double kMaxEdges = 2e7;

inline Status check_budget(const WorkloadParams& params, double ops, double edges = 0) {
  if (ops > kMaxOps || edges > kMaxEdges)
    return make_error(params.workload + ": these parameters give about " +
                      std::to_string(static_cast<long long>(ops)) + " ops and " +
                      std::to_string(static_cast<long long>(edges)) + " edges; the limit is " +
                      std::to_string(static_cast<long long>(kMaxOps)) + " ops and " +
                      std::to_string(static_cast<long long>(kMaxEdges)) + " edges");
  return Ok{};
}

// The params with their workload name set, so that direct calls still get named errors.
inline WorkloadParams named(WorkloadParams params, const char* workload) {
  if (params.workload.empty()) params.workload = workload;
  return params;
}

// `n` cut into `parts` nearly equal pieces (the first n % parts are one larger), so shapes that do
// not divide evenly still partition the tensor exactly.
inline std::vector<std::int64_t> split_sizes(std::int64_t n, std::int64_t parts) {
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(parts), n / parts);
  for (std::int64_t i = 0; i < n % parts; ++i) ++sizes[static_cast<std::size_t>(i)];
  return sizes;
}

// "prefix" + "what[1,2,3]": a readable op name with block indices.
inline std::string label(const std::string& prefix, const char* what,
                         std::initializer_list<std::int64_t> index) {
  std::string out = prefix + what + "[";
  bool first = true;
  for (std::int64_t i : index) {
    if (!first) out += ",";
    out += std::to_string(i);
    first = false;
  }
  return out + "]";
}

inline OpSpec make_op(std::string name, OpKind kind, double flops, double bytes, double output_bytes,
                      std::vector<std::int64_t> shape) {
  OpSpec op;
  op.name = std::move(name);
  op.kind = kind;
  op.flops = flops;
  op.bytes = bytes;
  op.output_bytes = output_bytes;
  op.shape = std::move(shape);
  return op;
}

// (m x k) . (k x n): reads both operands, writes the product.
inline OpSpec matmul_op(std::string name, double m, double k, double n, double dtype_bytes,
                        std::vector<std::int64_t> shape) {
  return make_op(std::move(name), OpKind::matmul, 2 * m * k * n, (m * k + k * n + m * n) * dtype_bytes,
                 m * n * dtype_bytes, std::move(shape));
}

// Sum of `inputs` tensors of `elements` each (one input: a copy / re-blocking).
inline OpSpec sum_op(std::string name, OpKind kind, double elements, int inputs, double dtype_bytes,
                     std::vector<std::int64_t> shape) {
  return make_op(std::move(name), kind, (inputs - 1) * elements, (inputs + 1) * elements * dtype_bytes,
                 elements * dtype_bytes, std::move(shape));
}

// max(x, 0) on `elements`: one flop per element, reads and writes the tensor.
inline OpSpec relu_op(std::string name, double elements, double dtype_bytes, std::vector<std::int64_t> shape) {
  return make_op(std::move(name), OpKind::elementwise, elements, 2 * elements * dtype_bytes, elements * dtype_bytes,
                 std::move(shape));
}

// An edge shipping the producer's whole output tensor; `slot` is the operand of dst's operation it
// feeds (-1 when dst has none).
inline void link(GraphBuilder& graph, OpId src, OpId dst, int slot = -1) {
  graph.add_edge(src, dst, graph.op(src).output_bytes, slot);
}

// Block `index` of a dimension cut into `sizes`: the slice [start, start + sizes[index]).
inline SliceRange block_of(int dim, const std::vector<std::int64_t>& sizes, std::int64_t index) {
  std::int64_t start = 0;
  for (std::int64_t i = 0; i < index; ++i) start += sizes[static_cast<std::size_t>(i)];
  return {dim, start, start + sizes[static_cast<std::size_t>(index)]};
}

inline Operation operation(TensorFn fn, double dtype_bytes, std::vector<Operand> operands) {
  Operation op;
  op.fn = fn;
  op.dtype = dtype_for_bytes(dtype_bytes);
  op.operands = std::move(operands);
  return op;
}

// `count` operands fed by edges, slots 0..count-1.
inline std::vector<Operand> edge_operands(int count) { return std::vector<Operand>(static_cast<std::size_t>(count)); }

// Weights are normal with standard deviation 1 / sqrt(fan_in), so activations keep their scale.
inline double weight_scale(std::int64_t fan_in) { return 1.0 / std::sqrt(static_cast<double>(fan_in)); }

}  // namespace workload_detail
}  // namespace gantry
