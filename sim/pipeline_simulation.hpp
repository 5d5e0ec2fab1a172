#pragma once
// A pipeline scheme compiled into a DAG (one op per F / B / W / BW task, edges for the activation
// and gradient hand-offs with their point-to-point time) and simulated with each device running
// its schedule in order on the same engine as placement.
#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.hpp"
#include "core/pipeline_scheme.hpp"
#include "core/placement.hpp"
#include "sim/sim_options.hpp"
#include "sim/sim_result.hpp"

namespace gantry {

// With activation offload (core/host_offload.hpp) each device d of D gets two more: its copy
// engines to host memory (D + d) and back (2D + d), whose ops are the copies; their memory
// effect on d is applied from the timeline (simulate_pipeline), not by the ops.
struct CompiledPipeline {
  Graph graph;                           // explicit costs; memory as per-op alloc / free
  Placement placement;                   // op -> device or copy engine
  std::vector<std::vector<OpId>> order;  // device, then copy engine -> ops in schedule order
  std::vector<PipeTask> task_of;         // op -> task (a copy: the F or B it serves)
  std::vector<std::uint8_t> host_copy;   // op -> 0: a task, 1: a copy to host memory, 2: a copy back
  int devices = 0;                       // the scheme's devices
};

Result<CompiledPipeline> compile_pipeline(const PipelineScheme& scheme, const StageCosts& costs);

struct PipelineRunInfo {
  double tokens_per_microbatch = 0;  // for tokens/s (0: not reported)
  std::vector<double> device_peak_flops;  // per device, for MFU (empty: not reported)
  LinkModel links = LinkModel::contention;
  bool record = false;               // keep the timeline (traces, SVG)
};

struct PipelineResult {
  bool completed = true;
  std::string error;                 // a deadlock, when the orders cannot make progress
  double iteration_time = 0;
  double bubble_ratio = 0;           // idle compute / (devices x time)
  std::vector<double> device_bubble; // per device
  std::vector<double> peak_memory;   // static + activations, per device
  std::vector<double> memory_limit;  // per device (empty: none)
  bool out_of_memory = false;
  double transfer_time = 0, exposed_transfer_time = 0;
  double overlap_ratio = 1;          // 1 - exposed / total transfer time
  double tokens_per_second_per_gpu = 0;
  double mfu = 0;                    // model FLOPs / (time x the devices' summed peak)
  std::vector<double> device_mfu;    // per device: its stages' FLOPs / (time x its peak)
  CompiledPipeline compiled;
  SimResult sim;
};

Result<PipelineResult> simulate_pipeline(const PipelineScheme& scheme, const StageCosts& costs,
                                         const PipelineRunInfo& info = {});

}  // namespace gantry
