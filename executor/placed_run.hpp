#pragma once
// A placed graph run for real under the simulator's runtime rules, whatever the devices are: an op
// starts once its inputs are on its device and one of the device's streams is free, the ready op
// that became ready first (or with the highest placement priority) going first, or each device
// follows a fixed order (a stall is reported as a deadlock); a tensor travels to a device once,
// whatever its consumers there, on the directed link's own thread, one transfer at a time in FIFO
// order; values are released after their last reader. What running an op and copying a tensor
// mean, and the clock, are the backend's (executor/cpu/, executor/cuda/). Internal to executor/.
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"
#include "executor/measurement.hpp"

namespace gantry {

// A value and when its work ran, in seconds since the run's begin_run().
struct Timed {
  at::Tensor value;
  double start = 0, end = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual const char* name() const = 0;  // Measurement::backend
  virtual std::string layout() const { return {}; }  // Measurement::layout
  // Called on each device stream thread (`slot`: which of the device's streams it is), and each
  // link thread, before its first op or copy of a run. Threads are new each run; a backend that
  // keeps per-stream state (CUDA streams, events) finds it again by (device, slot) or (from, to).
  // These three may throw: the run then ends with the message.
  virtual void enter_device_thread(int device, int slot) = 0;
  virtual void enter_link_thread(int from, int to) = 0;
  // The time base of a run: called before its first op may start.
  virtual void begin_run() = 0;
  // Runs `op` on `device` from the values of its in-edges, in order; finished when it returns.
  // Throws on failure (the message names no op: the caller does).
  virtual Timed run_op(int device, OpId op, const std::vector<at::Tensor>& inputs) = 0;
  // `value` (on `from`) as a tensor on `to`; finished when it returns. Throws on failure. Called on
  // the link thread of (from, to), or on `from`'s device thread when `from` has no copy engine.
  virtual Timed copy(int from, int to, const at::Tensor& value) = 0;
};

// Every tensor the run makes for an op (its output, its operation's parameters and inputs, a
// proxy GEMM's operands) fits its device's memory in the cluster: an output of 1e13 bytes was a
// std::bad_alloc mid-run, a chain of 2^40-wide matrices LibTorch's overflow with its backtrace.
Status check_tensors_fit(const Graph& graph, const Placement& placement, const Cluster& cluster);

// What a run needs of its input, checked before a backend builds tensors for it: a placement that
// fits the graph and cluster, tensors that fit the devices, a fixed order that is a permutation of
// each device's ops, a repeat.
Status check_placed_run(const Graph& graph, const Placement& placement, const Cluster& cluster, const ExecOptions& options);

// options.warmup untimed runs, then options.repeats timed ones, on `backend`, of a run that passed
// check_placed_run. Errors name the problem: a fixed order that deadlocks, an op whose kernel
// fails (with its name and the kernel's message).
Result<Measurement> execute_placed(const Graph& graph, const Placement& placement, const Cluster& cluster,
                                   const ExecOptions& options, DeviceBackend& backend);

}  // namespace gantry
