#include "tuner/pipeline/memory_fitting.hpp"

#include <algorithm>
#include <limits>

#include "tuner/pipeline/partition.hpp"

namespace gantry {

namespace {

constexpr int kShares = 10;  // r in tenths

// A share r = tenths / 10 of a stage's full warm-up depth, rounded up (integer arithmetic: a
// share that lands on a whole number of microbatches must not round up), within [1, microbatches].
int depth(int tenths, int full, int microbatches) {
  return std::clamp((tenths * full + kShares - 1) / kShares, 1, std::max(1, microbatches));
}

}  // namespace

Result<std::vector<PipelineCandidate>> memory_fitting_candidates(const StageSource& source, int layers, int microbatches) {
  auto base = layout_candidate(source, StageLayout{1, false});
  if (!base) return std::vector<PipelineCandidate>{};  // fewer layers than devices: no such layout
  const int stages = static_cast<int>(base.value().placement.size());
  std::vector<StageCosts> on_device;  // per device: every layer a stage there
  for (int d = 0; d < source.devices(); ++d) {
    auto costs = per_layer_costs(source, layers, d);
    if (!costs) return costs.error();
    on_device.push_back(std::move(costs).value());
  }
  // Per stage and layer: its time, its static memory and what each microbatch it holds takes (F's
  // activations and B's gradients, as the list scheduler's memory rule reserves them).
  std::vector<std::vector<double>> time(stages), per_microbatch(stages), fixed(stages);
  std::vector<double> capacity(stages, std::numeric_limits<double>::infinity());
  bool limited = false;
  for (int s = 0; s < stages; ++s) {
    const int device = base.value().placement[s];
    const StageCosts& c = on_device[device];
    if (device < static_cast<int>(c.max_mem.size()) && c.max_mem[device] > 0) {
      capacity[s] = c.max_mem[device];
      limited = true;
    }
    for (int i = 0; i < layers; ++i) {
      time[s].push_back(c.f[i] + c.b[i] + c.w[i]);
      per_microbatch[s].push_back(c.mem_f[i] + std::max(0.0, c.mem_b[i]));
      fixed[s].push_back(c.static_memory[i]);
    }
  }
  if (!limited) return std::vector<PipelineCandidate>{};  // nothing to fit
  std::vector<PipelineCandidate> out;
  for (int tenths = kShares; tenths >= 1; --tenths) {
    std::vector<std::vector<double>> size(stages, std::vector<double>(layers));
    for (int s = 0; s < stages; ++s) {
      const int full = base.value().rules.in_flight_limit[base.value().placement[s]];  // 1F1B's p - s
      const int held = depth(tenths, full, microbatches);
      for (int i = 0; i < layers; ++i) size[s][i] = fixed[s][i] + held * per_microbatch[s][i];
    }
    auto partition = partition_min_max_within(time, size, capacity);
    if (!partition) continue;  // nothing fits this depth
    PipelineCandidate c = base.value();
    c.partition = std::move(partition).value();
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gantry
