#pragma once
// Baseline pipeline schedules. Stage s of a p-stage pipeline runs on device s; interleaved
// schedules give each device v chunks (virtual stage c*p + d on device d).
#include "core/pipeline_scheme.hpp"
#include "core/result.hpp"

namespace gantry {

// GPipe: every microbatch's forward, then every backward (fused BW).
Result<PipelineScheme> make_gpipe(int devices, int microbatches);
// 1F1B (PipeDream-flush): p - d - 1 warm-up forwards, then one forward one backward, then cool-down.
Result<PipelineScheme> make_1f1b(int devices, int microbatches);
// Megatron's interleaved 1F1B: v chunks per device, warm-up (p - d - 1) * 2 + (v - 1) * p,
// microbatches in groups of p (so the microbatch count must be a multiple of p).
Result<PipelineScheme> make_interleaved(int devices, int chunks, int microbatches);
// Zero-bubble ZB-H1 style, automatic: B and W split; a device runs a ready B first, else a ready F
// within 1F1B's in-flight limit (p - d microbatches between F and B) and the memory limit
// (costs.max_mem minus static memory), else a pending W, which fills what would be a bubble and,
// when memory is short, frees room for the next F.
Result<PipelineScheme> make_zb_h1(int devices, int microbatches, const StageCosts& costs);
// ZB-V: two chunks per device in a V (stage k on device k for k < p, on device 2p-1-k after), B and
// W split, built by the same kind of list-scheduling pass over 2p stage costs: a free device runs
// the ready B of its deepest stage, else a ready F (the returning chunk first; a new microbatch
// only while fewer than 2p - 1 chunk-activations are in flight and memory allows), else a pending
// W. Peak activation memory stays at 1F1B's first stage (2p half-stage chunks) in the tests.
Result<PipelineScheme> make_zb_v(int devices, int microbatches, const StageCosts& costs);

}  // namespace gantry
