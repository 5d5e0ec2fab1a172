#include "tuner/pipeline/schedules.hpp"

#include <algorithm>

#include "tuner/pipeline/list_scheduler.hpp"

namespace gantry {

namespace {

Status check_sizes(int devices, int microbatches, int chunks = 1) {
  if (devices < 1) return make_error("pipeline: the pipeline degree must be at least 1");
  if (microbatches < 1) return make_error("pipeline: the microbatch count must be at least 1");
  if (chunks < 1) return make_error("pipeline: a schedule needs at least 1 chunk per device");
  if (devices > kMaxPipelineTasks / chunks) return make_error("pipeline: too many stages");
  return check_pipeline_size(microbatches, static_cast<std::int64_t>(devices) * chunks, "pipeline");
}

PipelineScheme plain_scheme(int devices, int microbatches) {
  PipelineScheme scheme;
  scheme.num_microbatches = microbatches;
  scheme.schedule.resize(devices);
  for (int s = 0; s < devices; ++s) scheme.placement.push_back(s);
  return scheme;
}

}  // namespace

std::vector<int> stage_placement(int devices, const StageLayout& layout) {
  const int stages = devices * layout.chunks;
  std::vector<int> placement;
  for (int k = 0; k < stages; ++k) placement.push_back(layout.v_shape && k >= devices ? 2 * devices - 1 - k : k % devices);
  return placement;
}

Result<PipelineScheme> make_gpipe(int devices, int microbatches) {
  auto ok = check_sizes(devices, microbatches);
  if (!ok) return ok.error();
  PipelineScheme scheme = plain_scheme(devices, microbatches);
  for (int d = 0; d < devices; ++d) {
    for (int m = 0; m < microbatches; ++m) scheme.schedule[d].push_back({PipeOp::F, m, d});
    for (int m = 0; m < microbatches; ++m) scheme.schedule[d].push_back({PipeOp::BW, m, d});
  }
  return scheme;
}

Result<PipelineScheme> make_1f1b(int devices, int microbatches) {
  auto ok = check_sizes(devices, microbatches);
  if (!ok) return ok.error();
  PipelineScheme scheme = plain_scheme(devices, microbatches);
  for (int d = 0; d < devices; ++d) {
    auto& list = scheme.schedule[d];
    const int warmup = std::min(devices - d - 1, microbatches);
    for (int m = 0; m < warmup; ++m) list.push_back({PipeOp::F, m, d});
    for (int i = 0; i < microbatches - warmup; ++i) {
      list.push_back({PipeOp::F, warmup + i, d});
      list.push_back({PipeOp::BW, i, d});
    }
    for (int m = microbatches - warmup; m < microbatches; ++m) list.push_back({PipeOp::BW, m, d});
  }
  return scheme;
}

Result<PipelineScheme> make_interleaved(int devices, int chunks, int microbatches) {
  auto ok = check_sizes(devices, microbatches, chunks);
  if (!ok) return ok.error();
  if (microbatches % devices != 0)
    return make_error("pipeline: interleaved 1F1B needs the microbatch count (" + std::to_string(microbatches) +
                      ") to be a multiple of the pipeline degree (" + std::to_string(devices) + ")");
  PipelineScheme scheme;
  scheme.num_microbatches = microbatches;
  scheme.schedule.resize(devices);
  scheme.placement = stage_placement(devices, {chunks, false});
  const int total = microbatches * chunks;  // (microbatch, chunk) pairs per device
  const int group = devices * chunks;
  // Megatron's order: microbatches in groups of p; within a group every chunk in turn (forward
  // ascending, backward descending).
  auto task = [&](int k, bool forward, int d) {
    const int in_group = k % group;
    int chunk = in_group / devices;
    if (!forward) chunk = chunks - 1 - chunk;
    const int microbatch = (k / group) * devices + in_group % devices;
    return PipeTask{forward ? PipeOp::F : PipeOp::BW, microbatch, chunk * devices + d};
  };
  for (int d = 0; d < devices; ++d) {
    auto& list = scheme.schedule[d];
    const int warmup = std::min((devices - d - 1) * 2 + (chunks - 1) * devices, total);
    for (int k = 0; k < warmup; ++k) list.push_back(task(k, true, d));
    for (int i = 0; i < total - warmup; ++i) {
      list.push_back(task(warmup + i, true, d));
      list.push_back(task(i, false, d));
    }
    for (int k = total - warmup; k < total; ++k) list.push_back(task(k, false, d));
  }
  return scheme;
}

Result<PipelineScheme> make_zb_h1(int devices, int microbatches, const StageCosts& costs) {
  auto ok = check_sizes(devices, microbatches);
  if (!ok) return ok.error();
  if (costs.num_stages() != devices)
    return make_error("pipeline: ZB-H1 needs one stage per device (" + std::to_string(devices) + "), the costs give " +
                      std::to_string(costs.num_stages()));
  ListScheduleRules rules;  // 1F1B's activation memory: p - d microbatches between F and B
  for (int d = 0; d < devices; ++d) rules.in_flight_limit.push_back(devices - d);
  return pipeline_list_schedule(plain_scheme(devices, microbatches), costs, rules);
}

Result<PipelineScheme> make_zb_v(int devices, int microbatches, const StageCosts& costs) {
  auto ok = check_sizes(devices, microbatches, 2);
  if (!ok) return ok.error();
  const int stages = 2 * devices;
  if (costs.num_stages() != stages)
    return make_error("pipeline: ZB-V needs two chunks per device (" + std::to_string(stages) + " stages), the costs give " +
                      std::to_string(costs.num_stages()));
  PipelineScheme scheme;
  scheme.num_microbatches = microbatches;
  scheme.schedule.resize(devices);
  scheme.placement = stage_placement(devices, {2, true});
  // 1F1B's first-stage memory in half-stage chunks, less one slot for the returning chunk.
  ListScheduleRules rules;
  rules.in_flight_limit.assign(devices, stages - 1);
  return pipeline_list_schedule(std::move(scheme), costs, rules);
}

}  // namespace gantry
