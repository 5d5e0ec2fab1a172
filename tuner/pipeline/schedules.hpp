#pragma once
// Baseline pipeline schedules. Stage s of a p-stage pipeline runs on device s; interleaved
// schedules give each device v chunks (virtual stage c*p + d on device d).
#include <vector>

#include "core/pipeline_scheme.hpp"
#include "core/result.hpp"

namespace gantry {

// How a schedule lays out its virtual stages: `chunks` per device, chunk c of device d being stage
// c*p + d, or in a V (two chunks: stage k on device k for k < p, on device 2p-1-k after).
struct StageLayout {
  int chunks = 1;
  bool v_shape = false;
};
// Stage -> device for `devices` devices.
std::vector<int> stage_placement(int devices, const StageLayout& layout);

// GPipe: every microbatch's forward, then every backward (fused BW).
Result<PipelineScheme> make_gpipe(int devices, int microbatches);
// 1F1B (PipeDream-flush): p - d - 1 warm-up forwards, then one forward one backward, then cool-down.
Result<PipelineScheme> make_1f1b(int devices, int microbatches);
// Megatron's interleaved 1F1B: v chunks per device, warm-up (p - d - 1) * 2 + (v - 1) * p,
// microbatches in groups of p (so the microbatch count must be a multiple of p).
Result<PipelineScheme> make_interleaved(int devices, int chunks, int microbatches);
// Zero-bubble schedules, built by one pass of the list scheduler (list_scheduler.hpp) with the real
// costs, B and W split: a free device runs a ready F or B (F first, deepest stage first; a new
// microbatch only within the in-flight limit and the memory limit, costs.max_mem minus static
// memory), else a pending W, which fills what would be a bubble and frees memory.
// ZB-H1 style: one stage per device, 1F1B's in-flight limit of p - d microbatches.
Result<PipelineScheme> make_zb_h1(int devices, int microbatches, const StageCosts& costs);
// ZB-V: two chunks per device in a V (stage k on device k for k < p, on device 2p-1-k after),
// at most 2p - 1 chunk activations in flight; the returning chunk's F is never held back.
Result<PipelineScheme> make_zb_v(int devices, int microbatches, const StageCosts& costs);

}  // namespace gantry
