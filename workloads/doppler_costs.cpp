#include "workloads/doppler_costs.hpp"

#include <stdexcept>

namespace gantry {

namespace {

double multiply_adds(const Graph& g, OpId op) {
  const double flops = g.flops(op);
  if (flops <= 0) return 1;
  const OpKind kind = g.kind(op);
  return kind == OpKind::matmul || kind == OpKind::attention ? flops / 2 : flops;
}

}  // namespace

Graph with_doppler_costs(const Graph& graph) {
  GraphBuilder builder(graph.source(), "units");
  for (OpId op = 0; op < graph.size(); ++op) {
    OpSpec spec;
    spec.name = graph.name(op);
    spec.kind = graph.kind(op);
    spec.flops = graph.flops(op);
    spec.shape = graph.shape(op);
    if (const Operation* operation = graph.operation(op)) spec.operation = *operation;
    spec.cost = multiply_adds(graph, op);
    spec.transfer_cost = 4 * spec.cost;
    builder.add_op(std::move(spec));
  }
  for (EdgeId e = 0; e < graph.num_edges(); ++e)
    builder.add_edge(graph.edge_src(e), graph.edge_dst(e), 0, graph.edge_slot(e));
  auto built = builder.build();
  // The input was a valid graph and costs are finite and positive: a failure here is a bug.
  if (!built) throw std::logic_error("with_doppler_costs: " + built.error().message);
  return std::move(built).value();
}

}  // namespace gantry
