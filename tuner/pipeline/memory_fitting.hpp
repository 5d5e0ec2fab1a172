#pragma once
// Partitions that leave the first stages room for the microbatches they hold. Under 1F1B-like
// schedules stage s of p holds up to p - s microbatches' activations, so when memory binds, a
// time-balanced partition gives the first stages too many layers (parameters and optimizer state)
// for the depth they need, and their warm-up stalls the whole pipeline: nemotron-h-47b on
// 16 H100s, whose time-balanced starts run 18.3 s and whose descents end at 16.3 s, while the
// balanced partition that fits 60% of that depth starts at 15.6 s and its descents end at 15.0 s.
#include <vector>

#include "tuner/pipeline/pipeline_candidate.hpp"
#include "tuner/pipeline/stage_source.hpp"

namespace gantry {

// One stage per device (ZB-H1's layout and rules), the stage times balanced (min-max) among the
// partitions where every stage s fits its device's memory with ceil(r (p - s)) microbatches (at
// least 1, at most `microbatches`; p - s is the layout's warm-up depth), for r = 1, 0.9, ...,
// 0.1: each distinct partition once, r descending. A stage's memory is an estimate, additive
// over its layers: their static memory, and per microbatch their F's activations and B's
// gradients (what the list scheduler's memory rule reserves for a microbatch; the gradients that
// wait for a delayed W are not counted). Empty when no device has a memory limit, the model has
// fewer layers than devices or no partition fits.
Result<std::vector<PipelineCandidate>> memory_fitting_candidates(const StageSource& source, int layers, int microbatches);

}  // namespace gantry
