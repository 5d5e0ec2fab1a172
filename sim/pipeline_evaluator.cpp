#include "sim/pipeline_evaluator.hpp"

#include <algorithm>
#include <cmath>

namespace gantry {

Result<PipelineEvaluator> PipelineEvaluator::compile(const PipelineScheme& scheme) {
  auto ok = scheme.check();
  if (!ok) return ok.error();
  PipelineEvaluator e;
  e.stages_ = scheme.num_stages();
  e.devices_ = scheme.num_devices();
  e.micro_ = scheme.num_microbatches;
  e.placement_ = scheme.placement;
  e.fused_.assign(static_cast<std::size_t>(e.micro_) * e.stages_, 0);
  for (const auto& list : scheme.schedule)
    for (const PipeTask& t : list) {
      if (t.op == PipeOp::BW) e.fused_[static_cast<std::size_t>(t.microbatch) * e.stages_ + t.stage] = 1;
      ++e.tasks_;
    }
  const std::size_t ids = static_cast<std::size_t>(kKinds) * e.micro_ * e.stages_;
  e.stamp_.assign(ids, 0);
  e.pending_.assign(ids, 0);
  e.ready_.assign(ids, 0.0);
  e.link_free_.assign(static_cast<std::size_t>(e.devices_) * e.devices_, 0.0);
  e.position_.assign(3 * e.devices_, 0);  // devices, then their copy engines out and back
  e.device_free_.assign(3 * e.devices_, 0.0);
  e.memory_.assign(e.devices_, 0.0);
  e.order_.reserve(e.tasks_);
  e.worklist_.reserve(static_cast<std::size_t>(e.tasks_) + e.devices_);
  return e;
}

Status PipelineEvaluator::load_orders(const PipelineScheme& scheme) {
  if (scheme.num_stages() != stages_ || scheme.num_devices() != devices_ || scheme.num_microbatches != micro_ ||
      scheme.placement != placement_)
    return make_error("pipeline evaluator: the scheme's stages, devices, microbatches or placement differ from the "
                      "compiled structure");
  if (++evaluation_ == 0) {  // wrapped: old stamps could collide
    std::fill(stamp_.begin(), stamp_.end(), 0);
    evaluation_ = 1;
  }
  order_.clear();
  order_begin_.assign(1, 0);
  for (int d = 0; d < devices_; ++d) {
    for (const PipeTask& t : scheme.schedule[d]) {
      if (t.microbatch < 0 || t.microbatch >= micro_ || t.stage < 0 || t.stage >= stages_)
        return make_error("pipeline evaluator: device " + std::to_string(d) + " lists " + task_name(t) + ", out of range");
      if (placement_[t.stage] != d)
        return make_error("pipeline evaluator: device " + std::to_string(d) + " lists " + task_name(t) + " but stage " +
                          std::to_string(t.stage) + " is on device " + std::to_string(placement_[t.stage]));
      const bool fused = fused_[static_cast<std::size_t>(t.microbatch) * stages_ + t.stage];
      if (t.op != PipeOp::F && (t.op == PipeOp::BW) != fused)
        return make_error("pipeline evaluator: " + task_name(t) + (fused ? " is split, but the compiled structure fuses BW"
                                                                         : " is fused, but the compiled structure splits B and W"));
      const std::int32_t task = id(t.op, t.microbatch, t.stage);
      if (stamp_[task] == evaluation_) return make_error("pipeline evaluator: " + task_name(t) + " is scheduled twice");
      stamp_[task] = evaluation_;
      order_.push_back(task);
    }
    order_begin_.push_back(static_cast<std::int32_t>(order_.size()));
  }
  if (static_cast<std::int32_t>(order_.size()) != tasks_)
    return make_error("pipeline evaluator: the orders list " + std::to_string(order_.size()) + " tasks, the structure has " +
                      std::to_string(tasks_));
  return Ok{};
}

void PipelineEvaluator::load_host_copies(const PipelineScheme& scheme, const StageCosts& costs) {
  copies_ = costs.offloads();
  if (!copies_) return;
  if (issues_.size() != ready_.size()) issues_.assign(ready_.size(), -1);
  for (std::int32_t task : order_) issues_[task] = -1;
  const HostCopyPlan plan = host_copy_plan(scheme, costs);
  for (int d = 0; d < devices_; ++d) {
    for (const PipeTask& t : plan.offloads[d]) order_.push_back(id(kOffload, t.microbatch, t.stage));
    order_begin_.push_back(static_cast<std::int32_t>(order_.size()));
  }
  for (int d = 0; d < devices_; ++d) {
    for (std::size_t i = 0; i < plan.reloads[d].size(); ++i) {
      const PipeTask& t = plan.reloads[d][i];
      const std::int32_t reload = id(kReload, t.microbatch, t.stage);
      order_.push_back(reload);
      if (plan.issued_after[d][i] >= 0) issues_[order_[order_begin_[d] + plan.issued_after[d][i]]] = reload;
    }
    order_begin_.push_back(static_cast<std::int32_t>(order_.size()));
  }
  task_events_.resize(devices_);
  out_events_.resize(devices_);
  back_events_.resize(devices_);
}

void PipelineEvaluator::run(const StageCosts& costs, LinkModel links, PipelineEvaluation& out) {
  const int S = stages_, D = devices_;
  const int engines = copies_ ? 3 * D : D;  // devices, then their copy engines out and back
  const bool contention = links == LinkModel::contention;
  auto offloads = [&](int s) { return copies_ && costs.offload[s] > 0; };
  for (std::int32_t task : order_) {
    const int kind = task / (micro_ * S), s = task % S;
    // Only a first-stage F has no input; W waits for its B, F for the stage before, B for the one
    // after (and for its activations' copy back), a copy out for its F, a copy back for its copy out.
    const bool backward = kind == static_cast<int>(PipeOp::B) || kind == static_cast<int>(PipeOp::BW);
    pending_[task] = kind == static_cast<int>(PipeOp::F) && s == 0 ? 0 : 1 + (backward && offloads(s));
    ready_[task] = 0;
  }
  if (copies_) {
    for (std::int32_t task : order_)
      if (task / (micro_ * S) < kOffload && issues_[task] >= 0) ++pending_[issues_[task]];  // and what issues it
    for (auto* lists : {&task_events_, &out_events_, &back_events_})
      for (auto& list : *lists) list.clear();
  }
  std::fill(link_free_.begin(), link_free_.end(), 0.0);
  std::fill(position_.begin(), position_.begin() + engines, 0);
  std::fill(device_free_.begin(), device_free_.begin() + engines, 0.0);
  std::fill(memory_.begin(), memory_.end(), 0.0);
  out.busy.assign(D, 0.0);
  if (record_starts_) {
    out.start.resize(D);
    for (int d = 0; d < D; ++d) out.start[d].assign(order_begin_[d + 1] - order_begin_[d], 0.0);
  } else {
    out.start.clear();
  }
  out.peak_memory.assign(D, 0.0);
  worklist_.clear();
  for (int d = engines - 1; d >= 0; --d) worklist_.push_back(d);

  std::int32_t done = 0;
  double makespan = 0;
  auto head = [&](int d) { return position_[d] < order_begin_[d + 1] - order_begin_[d] ? order_[order_begin_[d] + position_[d]] : -1; };
  auto owner = [&](std::int32_t task) {  // the device or copy engine that runs it
    const int kind = task / (micro_ * S), d = placement_[task % S];
    return kind == kOffload ? D + d : kind == kReload ? 2 * D + d : d;
  };
  // `task`'s input on its own device (or copy engine) is ready at `time`.
  auto local = [&](std::int32_t task, double time) {
    ready_[task] = std::max(ready_[task], time);
    if (--pending_[task] == 0 && head(owner(task)) == task) worklist_.push_back(owner(task));
  };
  // The input of `task` (at stage `to`) produced on device `from` at `end` arrives.
  auto deliver = [&](std::int32_t task, int from_stage, int to_stage, double end) {
    const int from = placement_[from_stage], to = placement_[to_stage];
    const double arrival =
        from == to ? end
                   : hand_off_arrival(end, costs.comm[std::min(from_stage, to_stage)],
                                      contention ? &link_free_[static_cast<std::size_t>(from) * D + to] : nullptr);
    ready_[task] = std::max(ready_[task], arrival);
    if (--pending_[task] == 0 && to != from && head(to) == task) worklist_.push_back(to);
  };
  auto backward_of = [&](int m, int s) { return id(fused_[static_cast<std::size_t>(m) * S + s] ? PipeOp::BW : PipeOp::B, m, s); };
  while (!worklist_.empty()) {
    const int d = worklist_.back();
    worklist_.pop_back();
    for (std::int32_t task = head(d); task >= 0 && pending_[task] == 0; task = head(d)) {
      const int kind = task / (micro_ * S), m = task / S % micro_, s = task % S;
      if (kind >= kOffload) {  // a copy between the stage's device and host memory
        const double start = std::max(device_free_[d], ready_[task]), end = start + host_copy_time(costs, s);
        device_free_[d] = end;
        ++position_[d];
        if (kind == kOffload) {
          out_events_[placement_[s]].push_back({end, -costs.offload[s]});
          local(id(kReload, m, s), end);
        } else {
          back_events_[placement_[s]].push_back({start, costs.offload[s]});
          local(backward_of(m, s), end);
        }
        continue;
      }
      const TaskCost p = task_cost(static_cast<PipeOp>(kind), s, costs);
      const double start = std::max(device_free_[d], ready_[task]), end = start + p.time;
      if (copies_) {
        task_events_[d].push_back({start, p.alloc});
        task_events_[d].push_back({end, -p.release});
      } else {
        memory_[d] += p.alloc;
        out.peak_memory[d] = std::max(out.peak_memory[d], memory_[d]);
        memory_[d] -= p.release;
      }
      device_free_[d] = end;
      out.busy[d] += p.time;
      makespan = std::max(makespan, end);
      if (record_starts_) out.start[d][position_[d]] = start;
      ++position_[d];
      ++done;
      switch (static_cast<PipeOp>(kind)) {
        case PipeOp::F:
          if (s + 1 < S) deliver(id(PipeOp::F, m, s + 1), s, s + 1, end);
          else deliver(backward_of(m, s), s, s, end);
          if (offloads(s)) local(id(kOffload, m, s), end);
          break;
        case PipeOp::B:
          if (s > 0) deliver(backward_of(m, s - 1), s, s - 1, end);
          deliver(id(PipeOp::W, m, s), s, s, end);
          break;
        case PipeOp::BW:
          if (s > 0) deliver(backward_of(m, s - 1), s, s - 1, end);
          break;
        case PipeOp::W: break;
      }
      if (copies_ && issues_[task] >= 0) local(issues_[task], end);
    }
  }
  out.completed = done == tasks_;
  out.iteration_time = out.completed ? makespan : 0;
  double busy = 0;
  for (double b : out.busy) busy += b;
  out.bubble_ratio = out.completed && makespan > 0 ? 1 - busy / (D * makespan) : 0;
  if (copies_)
    for (int d = 0; d < D; ++d) out.peak_memory[d] = peak_memory(task_events_[d], out_events_[d], back_events_[d]);
  for (int s = 0; s < S; ++s) out.peak_memory[placement_[s]] += costs.static_memory[s];
  out.out_of_memory = false;
  for (int d = 0; d < D && d < static_cast<int>(costs.max_mem.size()); ++d)
    if (costs.max_mem[d] > 0 && out.peak_memory[d] > costs.max_mem[d]) out.out_of_memory = true;
}

Status PipelineEvaluator::evaluate(const PipelineScheme& scheme, const StageCosts& costs, LinkModel links,
                                   PipelineEvaluation& out) {
  auto costs_ok = costs.check("pipeline evaluator: costs");
  if (!costs_ok) return costs_ok;
  if (costs.num_stages() != stages_)
    return make_error("pipeline evaluator: the costs give " + std::to_string(costs.num_stages()) +
                      " stages, the scheme has " + std::to_string(stages_));
  auto ok = load_orders(scheme);
  if (!ok) return ok;
  load_host_copies(scheme, costs);
  run(costs, links, out);
  return Ok{};
}

Result<PipelineEvaluation> PipelineEvaluator::evaluate(const PipelineScheme& scheme, const StageCosts& costs,
                                                       LinkModel links) {
  PipelineEvaluation out;
  auto ok = evaluate(scheme, costs, links, out);
  if (!ok) return ok.error();
  return out;
}

}  // namespace gantry
