#pragma once
// The exact optimum of small pipeline problems, to measure how close the co-tuner gets: every
// partition of the layers into stages, every stage-to-device map with up to `max_chunks` stages
// per device (each device at least one), and every per-device order of the F, B, W tasks that
// fits in memory, by branch and bound. Orders are enumerated as schedules: tasks are appended in
// non-decreasing (start time, device) order, start = max(device free, inputs arrived), so each set
// of per-device orders is met exactly once; a branch is cut when a device's memory would exceed
// its limit (memory depends on the order only) or when the work left on a device cannot finish
// before the best time found. B and W are always split (a fused BW is never faster, nor lighter).
// Where the memory limit cuts a branch, the search is repeated for each set of devices whose stages
// recompute (options.recompute).
// Exact when every task takes time (with zero-time tasks and free hand-offs the tie rule on equal
// start times can pass a schedule by); problems of at most 3072 tasks (3 x microbatches x stages).
#include <cstdint>

#include "core/pipeline_scheme.hpp"
#include "sim/sim_options.hpp"
#include "tuner/pipeline/stage_source.hpp"

namespace gantry {

struct ExactPipelineOptions {
  int max_chunks = 2;               // stages per device
  double time_limit_seconds = 60;   // the search stops there, unfinished
  std::int64_t node_limit = 0;      // 0: none
  double upper_bound = 0;           // a known feasible time to prune with (0: none)
  // Also every choice of devices whose stages recompute their activations, where memory binds
  // (up to 16 devices; beyond, the search does not finish). The tuner's recompute moves switch a
  // device's stages together, but its splits, merges and swaps carry a stage's recomputation to
  // other devices, so it can reach sets this does not try; offload is not searched.
  bool recompute = true;
};

struct ExactPipelineResult {
  bool finished = false;       // the whole space was searched: iteration_time is the optimum
  bool found = false;          // a scheme that fits was found
  double iteration_time = 0;
  PipelineScheme scheme;       // with its partition and placement
  std::int64_t nodes = 0;
  double seconds = 0;
};

// `source` must partition layers (a model); `microbatches` per iteration.
Result<ExactPipelineResult> exact_pipeline(const StageSource& source, int microbatches, const ExactPipelineOptions& options,
                                           LinkModel links = LinkModel::contention);

}  // namespace gantry
