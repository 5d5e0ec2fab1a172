// FFNN (DOPPLER section 5): a stack of dense layers X_{l+1} = relu(X_l . W_l) on a batch x hidden
// activation, block partitioned into blocks x blocks tiles. Each layer is three levels:
//   block matmuls  P[i,j,k] = X[i,k] . W[k,j]     blocks^3
//   formations     Z[i,j]   = sum_k P[i,j,k]      blocks^2
//   elementwise    X'[i,j]  = relu(Z[i,j])        blocks^2
// so the defaults (4 layers, 3 blocks) give 12 levels and 180 ops like DOPPLER's FFNN graph, with
// 2048 x 4096 . 4096 x 4096 block matmuls (2^36 flops, DOPPLER's largest FFNN cost). Ops:
// layers (b^3 + 2 b^2); edges: layers (b^3 + b^2) into the formations and relus, plus
// (layers - 1) b^3 from each relu tile into the next layer's matmuls (225 by default).
// Real execution (core/operation.hpp): X is the graph input "ffnn.x", layer l's weight the
// parameter "l<l>.w" (hidden x hidden); each block op reads its tiles as slices.
#include "workloads/generators.hpp"

namespace gantry {

namespace {

using namespace workload_detail;

struct FfnnShape {
  std::int64_t layers = 4;
  std::int64_t blocks = 3;
  std::int64_t batch = 6144;
  std::int64_t hidden = 12288;
  double dtype_bytes = 4;
};

Result<FfnnShape> read_shape(const WorkloadParams& p) {
  FfnnShape s;
  auto layers = p.get_int("layers", 4, 1, 100000);
  if (!layers) return layers.error();
  auto blocks = p.get_int("blocks", 3, 1, 1024);
  if (!blocks) return blocks.error();
  auto batch = p.get_int("batch", 6144, 1, std::int64_t{1} << 40);
  if (!batch) return batch.error();
  auto hidden = p.get_int("hidden", 12288, 1, std::int64_t{1} << 40);
  if (!hidden) return hidden.error();
  auto dtype = p.get_real("dtype_bytes", 4, 0.125, 64);
  if (!dtype) return dtype.error();
  s.layers = layers.value();
  s.blocks = blocks.value();
  s.batch = batch.value();
  s.hidden = hidden.value();
  s.dtype_bytes = dtype.value();
  if (s.batch < s.blocks || s.hidden < s.blocks)
    return make_error(p.workload + ": batch (" + std::to_string(s.batch) + ") and hidden (" +
                      std::to_string(s.hidden) + ") must be at least blocks (" +
                      std::to_string(s.blocks) + ")");
  return s;
}

// One dense layer on block rows `rows` and hidden blocks `cols`; `input` holds the ops producing
// X[i,k] (empty for the graph input). Returns the ops producing relu(X . W)[i,j].
std::vector<OpId> add_layer(GraphBuilder& graph, const FfnnShape& s, std::int64_t layer,
                            const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols,
                            const std::vector<OpId>& input) {
  const std::int64_t b = s.blocks;
  const std::string prefix = "l" + std::to_string(layer) + ".";
  std::vector<OpId> out(static_cast<std::size_t>(b * b));
  for (std::int64_t i = 0; i < b; ++i)
    for (std::int64_t j = 0; j < b; ++j) {
      const double elements = static_cast<double>(rows[i]) * static_cast<double>(cols[j]);
      const std::vector<std::int64_t> shape = {rows[i], cols[j]};
      std::vector<OpId> partials;
      for (std::int64_t k = 0; k < b; ++k) {
        OpSpec spec = matmul_op(label(prefix, "mm", {i, j, k}), static_cast<double>(rows[i]),
                                static_cast<double>(cols[k]), static_cast<double>(cols[j]), s.dtype_bytes, shape);
        const Operand x = input.empty() ? Operand::input("ffnn.x", {s.batch, s.hidden},
                                                         {block_of(0, rows, i), block_of(1, cols, k)})
                                        : Operand::edge();
        const Operand w = Operand::parameter(prefix + "w", {s.hidden, s.hidden}, weight_scale(s.hidden),
                                             {block_of(0, cols, k), block_of(1, cols, j)});
        spec.operation = operation(TensorFn::matmul, s.dtype_bytes, {x, w});
        OpId mm = graph.add_op(std::move(spec));
        if (!input.empty()) link(graph, input[static_cast<std::size_t>(i * b + k)], mm, 0);
        partials.push_back(mm);
      }
      OpSpec sum_spec = sum_op(label(prefix, "sum", {i, j}), OpKind::formation, elements, static_cast<int>(b),
                               s.dtype_bytes, shape);
      sum_spec.operation = operation(TensorFn::add, s.dtype_bytes, edge_operands(static_cast<int>(b)));
      OpId sum = graph.add_op(std::move(sum_spec));
      for (std::size_t k = 0; k < partials.size(); ++k) link(graph, partials[k], sum, static_cast<int>(k));
      OpSpec relu_spec = relu_op(label(prefix, "relu", {i, j}), elements, s.dtype_bytes, shape);
      relu_spec.operation = operation(TensorFn::relu, s.dtype_bytes, edge_operands(1));
      OpId relu = graph.add_op(std::move(relu_spec));
      link(graph, sum, relu, 0);
      out[static_cast<std::size_t>(i * b + j)] = relu;
    }
  return out;
}

}  // namespace

WorkloadInfo ffnn_info() {
  return {"ffnn",
          "feed-forward network: layers x (block matmul -> formation -> relu) on a batch x hidden "
          "activation in blocks x blocks tiles (180 ops in 12 levels by default, like DOPPLER's FFNN)",
          "layers=4 blocks=3 batch=6144 hidden=12288 dtype_bytes=4"};
}

Result<Graph> make_ffnn(const WorkloadParams& given) {
  const WorkloadParams params = named(given, "ffnn");
  auto shape = read_shape(params);
  if (!shape) return shape.error();
  const FfnnShape& s = shape.value();
  const double b = static_cast<double>(s.blocks);
  auto budget = check_budget(params, static_cast<double>(s.layers) * (b * b * b + 2 * b * b),
                             static_cast<double>(s.layers) * 2 * b * b * b);
  if (!budget) return budget.error();

  GraphBuilder graph("ffnn");
  const auto rows = split_sizes(s.batch, s.blocks);
  const auto cols = split_sizes(s.hidden, s.blocks);
  std::vector<OpId> x;
  for (std::int64_t l = 0; l < s.layers; ++l) x = add_layer(graph, s, l, rows, cols, x);
  return graph.build();
}

}  // namespace gantry
