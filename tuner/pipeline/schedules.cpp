#include "tuner/pipeline/schedules.hpp"

#include <algorithm>
#include <deque>
#include <limits>

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

namespace {

// The zero-bubble list scheduler both ZB schedules use: it runs the pipeline with the real costs
// and records each device's order. A free device runs the ready B of its deepest stage, else a
// ready F (deepest first; F of a device's first stage brings in a new microbatch and needs
// in-flight room below `in_flight_limit[d]` and memory room), else a pending W (it fills what would
// be a bubble and frees memory), else waits for its earliest B or F.
Result<PipelineScheme> zero_bubble_order(PipelineScheme scheme, const StageCosts& costs,
                                         const std::vector<int>& in_flight_limit) {
  const int stages = scheme.num_stages(), devices = scheme.num_devices(), micro = scheme.num_microbatches;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<int>> stages_of(devices);  // deepest first
  for (int s = stages - 1; s >= 0; --s) stages_of[scheme.placement[s]].push_back(s);
  std::vector<int> entry(devices, stages);  // the first stage of each device
  for (int s = 0; s < stages; ++s) entry[scheme.placement[s]] = std::min(entry[scheme.placement[s]], s);
  auto at = [&](int s, int m) { return static_cast<std::size_t>(s) * micro + m; };
  std::vector<double> f_end(static_cast<std::size_t>(stages) * micro, inf), b_end = f_end;
  std::vector<int> next_f(stages, 0), next_b(stages, 0), next_w(stages, 0);
  std::vector<double> free_at(devices, 0.0), room(devices, inf), used(devices, 0.0);
  std::vector<int> in_flight(devices, 0), w_pending(devices, 0);  // activations between F and B; B without W
  for (int d = 0; d < devices && d < static_cast<int>(costs.max_mem.size()); ++d)
    if (costs.max_mem[d] > 0) {
      room[d] = costs.max_mem[d];
      for (int s : stages_of[d]) room[d] -= costs.static_memory[s];
    }
  auto comm = [&](int from, int to) {  // free between stages on one device
    return scheme.placement[from] == scheme.placement[to] ? 0.0 : costs.comm[std::min(from, to)];
  };
  for (int remaining = 3 * stages * micro; remaining > 0; --remaining) {
    int best_device = -1, best_stage = 0;
    PipeOp best_op = PipeOp::F;
    double best_start = inf;
    for (int d = 0; d < devices; ++d) {
      const double now = free_at[d];
      double start = inf;
      int stage = -1;
      PipeOp op = PipeOp::F;
      auto consider = [&](PipeOp kind, int s, double ready) {
        const double begin = std::max(now, ready);
        // Work that can start now wins by kind (B, F, W); otherwise the earliest start.
        if (begin < start || (begin == start && begin <= now && static_cast<int>(kind) < static_cast<int>(op))) {
          start = begin;
          stage = s;
          op = kind;
        }
      };
      for (int s : stages_of[d])
        if (next_b[s] < next_f[s]) {
          const int m = next_b[s];
          consider(PipeOp::B, s, s == stages - 1 ? f_end[at(s, m)] : b_end[at(s + 1, m)] + comm(s + 1, s));
        }
      const bool fits = used[d] + costs.mem_f[entry[d]] <= room[d] || (in_flight[d] == 0 && w_pending[d] == 0);
      for (int s : stages_of[d])
        if (next_f[s] < micro && (s != entry[d] || (in_flight[d] < in_flight_limit[d] && fits))) {
          const int m = next_f[s];
          consider(PipeOp::F, s, s == 0 ? 0.0 : f_end[at(s - 1, m)] + comm(s - 1, s));
        }
      if (start > now)
        for (int s : stages_of[d])
          if (next_w[s] < next_b[s]) consider(PipeOp::W, s, b_end[at(s, next_w[s])]);
      if (stage >= 0 && start < best_start) {
        best_start = start;
        best_device = d;
        best_stage = stage;
        best_op = op;
      }
    }
    if (best_device < 0) return make_error("pipeline: zero-bubble construction stalled (internal error)");
    const int d = best_device, s = best_stage;
    PipeTask t{best_op, 0, s};
    double duration = 0;
    switch (best_op) {
      case PipeOp::F:
        t.microbatch = next_f[s]++;
        duration = costs.f[s];
        f_end[at(s, t.microbatch)] = best_start + duration;
        used[d] += costs.mem_f[s];
        ++in_flight[d];
        break;
      case PipeOp::B:
        t.microbatch = next_b[s]++;
        duration = costs.b[s];
        b_end[at(s, t.microbatch)] = best_start + duration;
        used[d] += costs.mem_b[s];
        --in_flight[d];
        ++w_pending[d];
        break;
      case PipeOp::W:
        t.microbatch = next_w[s]++;
        duration = costs.w[s];
        used[d] += costs.mem_w[s];
        --w_pending[d];
        break;
      case PipeOp::BW: break;
    }
    free_at[d] = best_start + duration;
    scheme.schedule[d].push_back(t);
  }
  return scheme;
}

}  // namespace

Result<PipelineScheme> make_zb_h1(int devices, int microbatches, const StageCosts& costs) {
  auto ok = check_sizes(devices, microbatches);
  if (!ok) return ok.error();
  if (costs.num_stages() != devices)
    return make_error("pipeline: ZB-H1 needs one stage per device (" + std::to_string(devices) + "), the costs give " +
                      std::to_string(costs.num_stages()));
  std::vector<int> limit;  // 1F1B's activation memory: p - d microbatches between F and B
  for (int d = 0; d < devices; ++d) limit.push_back(devices - d);
  return zero_bubble_order(plain_scheme(devices, microbatches), costs, limit);
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
  return zero_bubble_order(std::move(scheme), costs, std::vector<int>(devices, stages - 1));
}

}  // namespace gantry
