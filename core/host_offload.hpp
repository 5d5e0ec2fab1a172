#pragma once
// Activation offload to host memory, as PipeOffload does (Wan et al., 2025): a stage whose costs
// offload bytes (StageCosts::offload) copies that part of each F's activations to host memory
// once the F ends, and the device frees it when the copy ends; before the B (or BW) of the same
// microbatch and stage a second copy brings it back, allocated on the device when it starts, and
// the B waits for it. The copy back is issued when the device ends the task `reload_ahead` places
// before that B in its order, but not before the B two copies back earlier ended (a double
// buffer: at most two copies back wait for their B), and starts no earlier than its copy out
// ended; with nothing to wait for it is issued at the start. Each device has a copy engine per direction (host links are full duplex) that
// runs its copies one at a time in the order they are issued, each taking bytes / the stage's
// host bandwidth. Every pipeline engine takes the copies from host_copy_plan.
#include <vector>

#include "core/pipeline_scheme.hpp"

namespace gantry {

// Copies back a device holds ahead of their B at most.
constexpr int kCopiesBackInFlight = 2;

struct HostCopyPlan {
  // Device -> the F tasks whose activations it copies out, in the order its engine copies them.
  std::vector<std::vector<PipeTask>> offloads;
  // Device -> the B or BW tasks whose activations it copies back, in the order its engine copies
  // them, and for each the position in the device's order of the task whose end issues the copy
  // (-1: issued at the start).
  std::vector<std::vector<PipeTask>> reloads;
  std::vector<std::vector<int>> issued_after;
  bool empty() const;
};

// The copies of `scheme`'s orders under `costs` (stages with costs.offload[s] > 0). Needs a scheme
// that passes check() and costs of its stage count.
HostCopyPlan host_copy_plan(const PipelineScheme& scheme, const StageCosts& costs);

// The time one copy of stage `stage` takes.
double host_copy_time(const StageCosts& costs, int stage);

// A change of a device's memory at a time.
struct MemoryEvent {
  double time = 0;
  double delta = 0;
};

// The most memory a device holds at once (0 at least): the running sum of its events in time
// order, from three lists each already in time order: its tasks' (an allocation at each start,
// a release at each end, in the device's order), its copies out's frees and its copies back's
// allocations. At equal times the copies out's frees come first, then the tasks' events, then
// the copies back: a task's memory is given back before the next one takes its own, and nothing
// that ends at a time is counted with what starts then. Linear: a merge, not a sort.
double peak_memory(const std::vector<MemoryEvent>& tasks, const std::vector<MemoryEvent>& copies_out,
                   const std::vector<MemoryEvent>& copies_back);

}  // namespace gantry
