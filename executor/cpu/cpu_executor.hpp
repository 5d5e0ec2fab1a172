#pragma once
// The CPU backend: each device of the cluster is `streams` worker threads (pinned to a core where
// possible, one intra-op ATen thread each) and a transfer is a real copy made by the directed
// link's own thread, one at a time in FIFO order, optionally throttled to the link's bandwidth. The
// runtime is the simulator's: an op starts once its inputs are on its device and a stream is free,
// the ready op that became ready first (or with the highest placement priority) going first; a
// tensor travels to a device once, whatever its consumers there. Kernels run through ATen.
#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"
#include "executor/measurement.hpp"

namespace gantry {

// Runs `graph` placed by `placement` on `cluster`'s devices: options.warmup untimed runs, then
// options.repeats timed ones. Errors name the problem: a placement that does not fit the graph or
// cluster, a fixed order that is not a permutation of each device's ops or deadlocks, or an op
// whose kernel fails (with its name and the kernel's message).
Result<Measurement> execute_on_cpu(const Graph& graph, const Placement& placement, const Cluster& cluster,
                                   const ExecOptions& options);

// Whether the cluster's devices are CPU cores (kind "CPU"), which the CPU backend measures; any
// other kind is a GPU's, measured by the CUDA backend on a machine that has it.
bool is_cpu_cluster(const Cluster& cluster);
// An error naming the first device that is not a CPU core: measured on this machine's cores, its
// times would be recorded as that device's profiles (`execute`, `profile` run the CPU backend).
Status check_cpu_cluster(const Cluster& cluster);

}  // namespace gantry
