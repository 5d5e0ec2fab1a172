// OP-GRID: a synthetic sweep of shapes for `gantry profile`, so that the cost model interpolates
// between measured neighbours instead of extrapolating from the few shapes the other workloads
// happen to have:
//   GEMMs [rows x inner] . [inner x width] for every power of two from min_size to max_size in each
//   of the three dimensions, up to max_flops (287 GEMMs by default), each reading a left operand
//   that a copy has just written;
//   adds of two tensors and relus of one, max_size wide and 1, 2, 4, ... max_size rows.
// No GEMM depends on another: under any placement every device works at once, as in real runs
// (cores share caches and memory bandwidth). Operands are slices of the two graph inputs "grid.a"
// and "grid.b" (max_size x max_size), so a run builds two tensors however many shapes it times.
// `gantry profile` does not measure it by default: its GEMMs run faster than the same shapes
// inside real graphs (docs/architecture.md, "Profiles").
#include "workloads/generators.hpp"

namespace gantry {

namespace {

using namespace workload_detail;

struct GridShape {
  std::int64_t min_size = 32;
  std::int64_t max_size = 2048;
  double max_flops = 3e8;
  double dtype_bytes = 4;
};

Result<GridShape> read_shape(const WorkloadParams& p) {
  GridShape s;
  auto min_size = p.get_int("min_size", 32, 1, std::int64_t{1} << 20);
  if (!min_size) return min_size.error();
  auto max_size = p.get_int("max_size", 2048, 1, 32768);  // the two inputs: 4 GiB each at most in f32
  if (!max_size) return max_size.error();
  auto max_flops = p.get_real("max_flops", 3e8, 1, 1e15);
  if (!max_flops) return max_flops.error();
  auto dtype = p.get_real("dtype_bytes", 4, 0.125, 64);
  if (!dtype) return dtype.error();
  s.min_size = min_size.value();
  s.max_size = max_size.value();
  s.max_flops = max_flops.value();
  s.dtype_bytes = dtype.value();
  if (s.min_size > s.max_size)
    return make_error(p.workload + ": min_size (" + std::to_string(s.min_size) + ") must not exceed max_size (" +
                      std::to_string(s.max_size) + ")");
  return s;
}

// min, 2 min, 4 min, ... up to max.
std::vector<std::int64_t> doublings(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t size = from; size <= to; size *= 2) sizes.push_back(size);
  return sizes;
}

// The top-left rows x cols corner of a max_size x max_size graph input.
Operand corner(const char* name, const GridShape& s, std::int64_t rows, std::int64_t cols) {
  return Operand::input(name, {s.max_size, s.max_size}, {{0, 0, rows}, {1, 0, cols}});
}

void add_gemms(GraphBuilder& graph, const GridShape& s) {
  const auto sizes = doublings(s.min_size, s.max_size);
  for (std::int64_t rows : sizes)
    for (std::int64_t inner : sizes)
      for (std::int64_t width : sizes) {
        const double m = static_cast<double>(rows), k = static_cast<double>(inner), n = static_cast<double>(width);
        if (2 * m * k * n > s.max_flops) continue;
        // The left operand is made by a copy just before, as in real graphs, where a GEMM reads what
        // another op has just written (cold in this core's caches, maybe on another device).
        OpSpec copy = sum_op(label("", "stage", {rows, inner, width}), OpKind::elementwise, m * k, 1, s.dtype_bytes,
                             {rows, inner});
        copy.operation = operation(TensorFn::add, s.dtype_bytes, {corner("grid.a", s, rows, inner)});
        const OpId staged = graph.add_op(std::move(copy));
        OpSpec spec = matmul_op(label("", "mm", {rows, inner, width}), m, k, n, s.dtype_bytes, {rows, width});
        spec.operation = operation(TensorFn::matmul, s.dtype_bytes, {Operand::edge(), corner("grid.b", s, inner, width)});
        link(graph, staged, graph.add_op(std::move(spec)), 0);
      }
}

void add_pointwise(GraphBuilder& graph, const GridShape& s) {
  for (std::int64_t rows : doublings(1, s.max_size)) {
    const std::vector<std::int64_t> shape = {rows, s.max_size};
    const double elements = static_cast<double>(rows * s.max_size);
    OpSpec add = sum_op(label("", "add", {rows, s.max_size}), OpKind::elementwise, elements, 2, s.dtype_bytes, shape);
    add.operation = operation(TensorFn::add, s.dtype_bytes,
                              {corner("grid.a", s, rows, s.max_size), corner("grid.b", s, rows, s.max_size)});
    graph.add_op(std::move(add));
    OpSpec relu = relu_op(label("", "relu", {rows, s.max_size}), elements, s.dtype_bytes, shape);
    relu.operation = operation(TensorFn::relu, s.dtype_bytes, {corner("grid.a", s, rows, s.max_size)});
    graph.add_op(std::move(relu));
  }
}

}  // namespace

WorkloadInfo op_grid_info() {
  return {"op-grid",
          "independent GEMMs over a grid of shapes (each of rows, inner and width a power of two from min_size "
          "to max_size, up to max_flops; 287 by default) and adds and relus from 1 to max_size rows: a sweep "
          "of shapes for `gantry profile --workload op-grid`",
          "min_size=32 max_size=2048 max_flops=3e8 dtype_bytes=4"};
}

Result<Graph> make_op_grid(const WorkloadParams& given) {
  const WorkloadParams params = named(given, "op-grid");
  auto shape = read_shape(params);
  if (!shape) return shape.error();
  const double sizes = static_cast<double>(doublings(shape.value().min_size, shape.value().max_size).size());
  const double rows = static_cast<double>(doublings(1, shape.value().max_size).size());
  auto budget = check_budget(params, 2 * sizes * sizes * sizes + 2 * rows, sizes * sizes * sizes);
  if (!budget) return budget.error();
  GraphBuilder graph("op-grid");
  add_gemms(graph, shape.value());
  add_pointwise(graph, shape.value());
  return graph.build();
}

}  // namespace gantry
