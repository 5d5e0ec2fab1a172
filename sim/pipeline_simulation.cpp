#include "sim/pipeline_simulation.hpp"

#include <algorithm>
#include <cmath>

#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "sim/simulator.hpp"

namespace gantry {

Result<CompiledPipeline> compile_pipeline(const PipelineScheme& scheme, const StageCosts& costs) {
  auto ok = scheme.check();
  if (!ok) return ok.error();
  auto costs_ok = costs.check("pipeline stage costs");
  if (!costs_ok) return costs_ok.error();
  if (costs.num_stages() != scheme.num_stages())
    return make_error("pipeline: the scheme has " + std::to_string(scheme.num_stages()) + " stages but the costs give " +
                      std::to_string(costs.num_stages()));
  const int stages = scheme.num_stages(), micro = scheme.num_microbatches;
  CompiledPipeline out;
  GraphBuilder builder("pipeline", "s");
  std::vector<OpId> id_of(static_cast<std::size_t>(4) * micro * stages, -1);
  auto id = [&](PipeOp op, int m, int s) -> OpId& { return id_of[(static_cast<std::size_t>(op) * micro + m) * stages + s]; };
  out.order.resize(scheme.num_devices());
  for (int d = 0; d < scheme.num_devices(); ++d)
    for (const PipeTask& t : scheme.schedule[d]) {
      OpSpec op;
      op.name = task_name(t);
      op.kind = OpKind::custom;
      const int s = t.stage;
      const TaskCost cost = task_cost(t.op, s, costs);
      op.cost = cost.time;
      op.mem_alloc = cost.alloc;
      op.mem_free = cost.release;
      const OpId op_id = builder.add_op(std::move(op));
      id(t.op, t.microbatch, s) = op_id;
      out.order[d].push_back(op_id);
      out.placement.device.push_back(d);
      out.task_of.push_back(t);
    }
  auto backward = [&](int m, int s) { return id(PipeOp::BW, m, s) >= 0 ? id(PipeOp::BW, m, s) : id(PipeOp::B, m, s); };
  for (int m = 0; m < micro; ++m)
    for (int s = 0; s < stages; ++s) {
      if (s + 1 < stages) {
        builder.add_edge(EdgeSpec{id(PipeOp::F, m, s), id(PipeOp::F, m, s + 1), 0, costs.comm[s], 0});  // activation
        builder.add_edge(EdgeSpec{backward(m, s + 1), backward(m, s), 0, costs.comm[s], 0});            // gradient
      } else {
        builder.add_edge(id(PipeOp::F, m, s), backward(m, s));  // the loss turns around on the last stage
      }
      if (id(PipeOp::W, m, s) >= 0) builder.add_edge(id(PipeOp::B, m, s), id(PipeOp::W, m, s));
    }
  auto graph = builder.build();
  if (!graph) return graph.error();
  out.graph = std::move(graph).value();
  return out;
}

Result<PipelineResult> simulate_pipeline(const PipelineScheme& scheme, const StageCosts& costs, const PipelineRunInfo& info) {
  auto compiled = compile_pipeline(scheme, costs);
  if (!compiled) return compiled.error();
  PipelineResult r;
  r.compiled = std::move(compiled).value();
  const int devices = scheme.num_devices();
  Cluster cluster = Cluster::identical(devices).value();  // times are explicit; links carry explicit p2p times
  CostTable table(r.compiled.graph, cluster);
  SimOptions options;
  options.dispatch = Dispatch::fixed_order;
  options.links = info.links;
  options.track_memory = true;
  options.record = true;  // exposed transfer time needs the timeline
  Simulator sim(r.compiled.graph, table, cluster, options);
  r.sim = sim.run(r.compiled.placement, &r.compiled.order);
  r.completed = r.sim.completed;
  r.error = r.sim.error;
  if (!r.completed) return r;

  const double t = r.sim.makespan;
  r.iteration_time = t;
  double busy = 0;
  for (int d = 0; d < devices; ++d) {
    r.device_bubble.push_back(t > 0 ? 1 - r.sim.busy[d] / t : 0);
    busy += r.sim.busy[d];
  }
  r.bubble_ratio = t > 0 ? 1 - busy / (devices * t) : 0;
  r.peak_memory = r.sim.peak_memory;
  for (int s = 0; s < scheme.num_stages(); ++s) r.peak_memory[scheme.placement[s]] += costs.static_memory[s];
  r.memory_limit = costs.max_mem;
  for (std::size_t d = 0; d < r.memory_limit.size() && d < r.peak_memory.size(); ++d)
    if (r.memory_limit[d] > 0 && r.peak_memory[d] > r.memory_limit[d]) r.out_of_memory = true;
  r.transfer_time = r.sim.transfer_time;
  r.exposed_transfer_time = r.sim.exposed_transfer_time;
  r.overlap_ratio = r.transfer_time > 0 ? 1 - r.exposed_transfer_time / r.transfer_time : 1;
  if (info.tokens_per_microbatch > 0 && t > 0)
    r.tokens_per_second_per_gpu = info.tokens_per_microbatch * scheme.num_microbatches / t / devices;
  if (static_cast<int>(info.device_peak_flops.size()) == devices && t > 0) {
    double flops = 0, peak = 0;
    std::vector<double> device_flops(devices, 0.0);
    for (int s = 0; s < scheme.num_stages(); ++s) {
      flops += costs.flops[s];
      device_flops[scheme.placement[s]] += costs.flops[s];
    }
    for (double p : info.device_peak_flops) peak += p;
    if (peak > 0) r.mfu = flops * scheme.num_microbatches / (t * peak);
    for (int d = 0; d < devices; ++d)
      r.device_mfu.push_back(info.device_peak_flops[d] > 0
                                 ? device_flops[d] * scheme.num_microbatches / (t * info.device_peak_flops[d]) : 0);
  }
  if (!info.record) {
    r.sim.ops.clear();
    r.sim.transfer_log.clear();
  }
  return r;
}

}  // namespace gantry
