#include "bench/executor_bench.hpp"

#include <stdexcept>

#include "core/cluster.hpp"
#include "executor/cpu/cpu_executor.hpp"

namespace gantry {

namespace {

struct Shape {
  const char* name;
  int devices;
  bool chain;
};

Graph empty_ops(int ops, bool chain) {
  GraphBuilder b(chain ? "empty chain" : "empty fan");
  for (int i = 0; i < ops; ++i) {
    OpSpec op;
    op.name = "op" + std::to_string(i);
    b.add_op(op);
    if (chain && i > 0) b.add_edge(i - 1, i);
  }
  auto g = b.build();
  if (!g) throw std::logic_error(g.error().message);
  return std::move(g).value();
}

}  // namespace

std::vector<ExecutorBenchRow> run_executor_bench(const ExecutorBenchOptions& options) {
  const Shape shapes[] = {{"chain-1", 1, true}, {"fan-1", 1, false}, {"fan-2", 2, false}, {"pingpong-2", 2, true}};
  std::vector<ExecutorBenchRow> rows;
  for (const Shape& shape : shapes) {
    const Graph graph = empty_ops(options.ops, shape.chain);
    auto cluster = Cluster::identical(shape.devices);
    if (!cluster) throw std::logic_error(cluster.error().message);
    Placement placement;
    for (int i = 0; i < options.ops; ++i) placement.device.push_back(i % shape.devices);
    ExecOptions exec;
    exec.repeats = options.repeats;
    exec.warmup = 1;
    exec.pin_threads = options.pin;
    auto m = execute_on_cpu(graph, placement, cluster.value(), exec);
    if (!m) throw std::runtime_error(m.error().message);
    const double per_op = 1e6 / options.ops;
    rows.push_back({shape.name, options.ops, shape.devices, options.repeats, m.value().median * per_op,
                    m.value().min * per_op, m.value().max * per_op});
  }
  return rows;
}

}  // namespace gantry
