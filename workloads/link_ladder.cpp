// LINK-LADDER: tensors of min_bytes, 4 min_bytes, 16 min_bytes, ... up to max_bytes, each made by
// one op (a copy of a slice of the graph input "ladder.x") and read by another (its mean). Placed
// with every source on one device and every reader on another, each edge is one transfer between
// them: `gantry profile` runs it for every ordered device pair, and sizes spanning several orders
// of magnitude let the profile tell a link's latency from its bandwidth (core/profile_table.hpp).
// The default stops at 16 MiB, beyond the tensors CPU-sized graphs move.
#include "workloads/generators.hpp"

namespace gantry {

WorkloadInfo link_ladder_info() {
  return {"link-ladder",
          "transfers from min_bytes to max_bytes (x4): each tensor made by a copy and read by a mean, for timing "
          "links (place the sources on one device and the readers on another)",
          "min_bytes=4096 max_bytes=16777216 dtype_bytes=4"};
}

Result<Graph> make_link_ladder(const WorkloadParams& given) {
  using namespace workload_detail;
  const WorkloadParams params = named(given, "link-ladder");
  auto dtype = params.get_real("dtype_bytes", 4, 0.125, 64);
  if (!dtype) return dtype.error();
  auto min_bytes = params.get_real("min_bytes", 4096, dtype.value(), 1e12);
  if (!min_bytes) return min_bytes.error();
  auto max_bytes = params.get_real("max_bytes", 16.0 * 1024 * 1024, dtype.value(), 1e12);
  if (!max_bytes) return max_bytes.error();
  if (min_bytes.value() > max_bytes.value())
    return make_error(params.workload + ": min_bytes (" + std::to_string(min_bytes.value()) +
                      ") must not exceed max_bytes (" + std::to_string(max_bytes.value()) + ")");
  const double dt = dtype.value();
  const auto largest = static_cast<std::int64_t>(max_bytes.value() / dt);
  GraphBuilder graph("link-ladder");
  for (double bytes = min_bytes.value(); bytes <= max_bytes.value(); bytes *= 4) {
    const auto elements = static_cast<std::int64_t>(bytes / dt);
    const double n = static_cast<double>(elements);
    OpSpec send = sum_op(label("", "send", {elements}), OpKind::elementwise, n, 1, dt, {elements});
    send.operation = operation(TensorFn::add, dt, {Operand::input("ladder.x", {largest}, {{0, 0, elements}})});
    const OpId source = graph.add_op(std::move(send));
    OpSpec recv = make_op(label("", "recv", {elements}), OpKind::reduce, n, (n + 1) * dt, dt, {1});
    recv.operation = operation(TensorFn::mean, dt, edge_operands(1));
    link(graph, source, graph.add_op(std::move(recv)), 0);
  }
  return graph.build();
}

}  // namespace gantry
