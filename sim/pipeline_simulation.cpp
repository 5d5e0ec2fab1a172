#include "sim/pipeline_simulation.hpp"

#include <algorithm>
#include <cmath>

#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/host_offload.hpp"
#include "sim/simulator.hpp"

namespace gantry {

namespace {

// The copies of host_copy_plan as ops on the copy engines, with their dependencies: a copy out
// after its F, a copy back after its copy out and the task that issues it, the B after its copy.
template <typename IdOf>
void add_host_copies(const PipelineScheme& scheme, const StageCosts& costs, IdOf& id, GraphBuilder& builder,
                     CompiledPipeline& out) {
  const HostCopyPlan plan = host_copy_plan(scheme, costs);
  if (plan.empty()) return;
  const int devices = scheme.num_devices();
  out.order.resize(3 * devices);
  auto add_copy = [&](const PipeTask& t, int engine, std::uint8_t direction) {
    OpSpec op;
    op.name = std::string(direction == 1 ? "offload " : "reload ") + task_name(t);
    op.kind = OpKind::custom;
    op.cost = host_copy_time(costs, t.stage);
    const OpId copy = builder.add_op(std::move(op));
    out.order[engine].push_back(copy);
    out.placement.device.push_back(engine);
    out.task_of.push_back(t);
    out.host_copy.push_back(direction);
    return copy;
  };
  std::vector<OpId> offload_of(static_cast<std::size_t>(scheme.num_microbatches) * scheme.num_stages(), -1);
  for (int d = 0; d < devices; ++d)
    for (const PipeTask& t : plan.offloads[d]) {
      const OpId copy = add_copy(t, devices + d, 1);
      offload_of[static_cast<std::size_t>(t.microbatch) * scheme.num_stages() + t.stage] = copy;
      builder.add_edge(EdgeSpec{id(PipeOp::F, t.microbatch, t.stage), copy, 0, 0, 0});
    }
  for (int d = 0; d < devices; ++d)
    for (std::size_t i = 0; i < plan.reloads[d].size(); ++i) {
      const PipeTask& t = plan.reloads[d][i];
      const OpId copy = add_copy(t, 2 * devices + d, 2);
      builder.add_edge(EdgeSpec{offload_of[static_cast<std::size_t>(t.microbatch) * scheme.num_stages() + t.stage], copy, 0, 0, 0});
      if (plan.issued_after[d][i] >= 0) builder.add_edge(EdgeSpec{out.order[d][plan.issued_after[d][i]], copy, 0, 0, 0});
      builder.add_edge(EdgeSpec{copy, id(t.op, t.microbatch, t.stage), 0, 0, 0});
    }
}

// Each device's peak memory from the timeline: its tasks' allocations and releases, the copies
// out freeing at their ends and the copies back allocating at their starts.
std::vector<double> peak_memory_with_copies(const CompiledPipeline& compiled, const StageCosts& costs,
                                            const SimResult& sim) {
  const int devices = compiled.devices;
  std::vector<double> peak;
  for (int d = 0; d < devices; ++d) {
    std::vector<MemoryEvent> tasks, out, back;
    for (OpId op : compiled.order[d]) {
      tasks.push_back({sim.ops[op].start, compiled.graph.mem_alloc(op)});
      tasks.push_back({sim.ops[op].end, -compiled.graph.mem_free(op)});
    }
    for (OpId op : compiled.order[devices + d]) out.push_back({sim.ops[op].end, -costs.offload[compiled.task_of[op].stage]});
    for (OpId op : compiled.order[2 * devices + d])
      back.push_back({sim.ops[op].start, costs.offload[compiled.task_of[op].stage]});
    peak.push_back(peak_memory(tasks, out, back));
  }
  return peak;
}

}  // namespace

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
  out.devices = scheme.num_devices();
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
      out.host_copy.push_back(0);
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
  add_host_copies(scheme, costs, id, builder, out);
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
  const int engines = static_cast<int>(r.compiled.order.size());  // devices and their copy engines
  // Times are explicit; links carry explicit p2p times.
  auto identical = Cluster::identical(engines);
  if (!identical && engines == devices)
    return make_error("pipeline: the scheme runs on " + std::to_string(devices) + " devices, over the limit of " +
                      std::to_string(kMaxDevices));
  if (!identical)
    return make_error("pipeline: with offload each of the scheme's " + std::to_string(devices) +
                      " devices runs its two copy engines as devices of their own, over the limit of " +
                      std::to_string(kMaxDevices) + " devices (offload on at most " + std::to_string(kMaxDevices / 3) +
                      " devices)");
  const Cluster cluster = std::move(identical).value();
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
  r.peak_memory = engines > devices ? peak_memory_with_copies(r.compiled, costs, r.sim) : r.sim.peak_memory;
  r.peak_memory.resize(devices);
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
