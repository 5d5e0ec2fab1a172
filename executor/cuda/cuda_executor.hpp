#pragma once
// The CUDA backend: each device of the cluster runs on a GPU, device d on GPU d mod the GPUs
// present, so a cluster of D devices on one GPU runs as D partitions of it (each with its own
// streams, sharing the SMs and memory bandwidth): what that measures is the contention of
// concurrent kernels on one chip, not D separate GPUs. Each of a device's `streams` threads
// launches on its own CUDA stream and times its op with CUDA events; a transfer is a copy on the
// destination GPU's stream of the link's thread (a peer copy between GPUs, a device-to-device copy
// within one); kernels run through ATen, with the graph's tensors built once per GPU. The runtime
// rules are the simulator's (executor/placed_run.hpp). Built only where LibTorch has CUDA.
// Streams come from ATen's pool, 32 per GPU in turn: more than 32 stream threads and links on one
// GPU (many devices mapped onto it) share streams, which serialises them and inflates their times.
#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"
#include "executor/measurement.hpp"

namespace gantry {

// GPUs this process can use: 0 in a build without CUDA or on a machine without a device.
int cuda_device_count();

// As execute_on_cpu, on the GPUs; an error when cuda_device_count() is 0.
Result<Measurement> execute_on_cuda(const Graph& graph, const Placement& placement, const Cluster& cluster,
                                    const ExecOptions& options);

}  // namespace gantry
