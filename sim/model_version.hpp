#pragma once
// The version of everything that decides a simulated makespan: the cost model, both engines and
// their options. Stored results are keyed by it, so a number computed by older code is never
// compared with a newer one (a correct but larger makespan could otherwise never replace a stale
// one). Bump it in the same commit as any change that alters makespans; the canary test in
// tests/sim/model_version_test.cpp pins makespans of fixed problems to this number and fails
// when they move without a bump.
namespace gantry {

// 1: the first stored results (foundation, tuning spine).
// 2: per-device port contention, lower bound with streams, validated placements.
// 3: the co-run slowdown counted once per busy neighbour on the host (the same on hosts of two).
constexpr int kModelVersion = 3;

// The same for pipeline schemes: the stage cost model (workloads/pipeline_stages), the scheme's
// compilation and simulation. Part of a stored pipeline best's runtime fingerprint.
// 1: the first stored schemes (the co-tuner).
// 2: activation recomputation (a scheme's recomputing stages; a B's transient memory).
constexpr int kPipelineModelVersion = 2;

}  // namespace gantry
