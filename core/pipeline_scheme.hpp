#pragma once
// A pipeline scheme: which layers form each stage (partition), which device runs each stage
// (placement; several virtual stages per device for interleaved and V shapes) and, per device,
// the ordered F / B / W (or fused BW) work of every (microbatch, stage) (schedule).
// StageCosts are the per-stage numbers a scheme is simulated with: the input form of the public
// zero-bubble scheduler (GraphConfig: cost_f, cost_b, cost_w per stage, cost_comm, mem_f, mem_b,
// mem_w, max_mem) so the same numbers can be run through other schedulers.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gantry {

enum class PipeOp : std::uint8_t { F, B, W, BW };
const char* to_string(PipeOp op);

struct PipeTask {
  PipeOp op = PipeOp::F;
  int microbatch = 0;
  int stage = 0;  // virtual stage
  bool operator==(const PipeTask& o) const { return op == o.op && microbatch == o.microbatch && stage == o.stage; }
};

// "F(3,1)": the op, microbatch and virtual stage of a task, as messages and traces name it.
std::string task_name(const PipeTask& task);

struct PipelineScheme {
  int num_microbatches = 0;
  std::vector<std::pair<int, int>> partition;  // stage -> [first layer, end layer); may be empty
  std::vector<int> placement;                  // stage -> device
  std::vector<std::vector<PipeTask>> schedule; // device -> ordered tasks
  std::vector<int> recompute;                  // stages that recompute their activations (sorted)
  // Activation offload (core/host_offload.hpp): per stage, the fraction of the activations its F
  // allocates that is copied to host memory after F and back before B (empty: none), and how
  // many tasks before that B, in its device's order, the copy back is issued.
  std::vector<double> offload;
  int reload_ahead = 2;

  int num_stages() const { return static_cast<int>(placement.size()); }
  int num_devices() const { return static_cast<int>(schedule.size()); }
  // Every (microbatch, stage) has F and either B and W or BW, each once, on the stage's device.
  Status check() const;
};

// The largest pipeline gantry builds and simulates: microbatches x stages x 3 (F, B, W) tasks.
// Each task costs about 450 bytes across the scheme, the compiled graph and the simulator
// (measured: 8 stages x 20000 microbatches of ZB take 214 MB), so a run at the limit stays near
// 2 GiB and 10 s instead of running out of memory after a long wait.
constexpr std::int64_t kMaxPipelineTasks = std::int64_t{1} << 22;
// An error naming `microbatches_input` (a flag or a file field) when microbatches x stages x 3
// exceeds kMaxPipelineTasks (or either is below 1).
Status check_pipeline_size(std::int64_t microbatches, std::int64_t stages, const std::string& microbatches_input);

// Costs of each (virtual) stage for one microbatch, in seconds and bytes.
struct StageCosts {
  std::vector<double> f, b, w;          // forward, input-gradient, weight-gradient time
  std::vector<double> comm;             // point-to-point time from stage s to s+1 (and the gradient back);
                                        // the last entry is unused
  std::vector<double> mem_f, mem_b, mem_w;  // memory deltas: F allocates (>= 0), W frees (<= 0), B
                                            // either (it may create gradients W reads); sum >= 0
  std::vector<double> static_memory;    // parameters, gradients and optimizer state of the stage
  std::vector<double> flops;            // F+B+W FLOPs of the stage (for MFU; 0 when unknown)
  std::vector<double> max_mem;          // memory limit per device (empty or 0: none)
  // What activation recomputation needs (empty: not known, as for stage files): the activation a
  // stage receives, which a recomputing stage keeps from F to B instead of all of its own, and
  // the output gradients B creates for W (part of mem_b).
  std::vector<double> input_bytes, w_grad_bytes;
  // Memory a B (or fused BW) holds only while it runs, on top of mem_b: the activations a
  // recomputing stage rebuilds (empty: none).
  std::vector<double> transient_b;
  // Activation offload: bytes of each stage's F activations copied to host memory and back per
  // microbatch (empty: none; offload_stage), and the bandwidth each way between the stage's device
  // and host memory (empty or 0: unknown, no offload).
  std::vector<double> offload, host_bandwidth;
  bool offloads() const;  // some stage offloads bytes
  int num_stages() const { return static_cast<int>(f.size()); }
  Status check(const std::string& source) const;
};

// What one task costs: its time, the memory it takes when it starts and what it gives back when it
// ends. F allocates its activations; B allocates the gradients W reads (mem_b > 0) or frees
// (mem_b < 0) at its end; W frees at its end; a fused BW holds B's gradients while it runs and
// frees the net of B and W at its end. The one pricing every engine (compiled DAG, evaluator,
// exact search) uses.
struct TaskCost {
  double time = 0, alloc = 0, release = 0;
};
TaskCost task_cost(PipeOp op, int stage, const StageCosts& costs);

// Stage `stage` with activation recomputation: F keeps only the stage's input; B first runs the
// forward again (its time grows by F's), holding the rebuilt activations and B's gradients while
// it runs (transient_b), and ends where B without recomputation ends (held inputs of the weight
// GEMMs and the gradients W reads), less the input. An error when the costs lack input_bytes
// and w_grad_bytes (stage files).
Status recompute_stage(StageCosts& costs, int stage);

// Stage `stage` offloads `fraction` (0 to 1) of its F activations (mem_f) to host memory: an error
// when the costs do not know its device's host bandwidth (stage files).
Status offload_stage(StageCosts& costs, int stage, double fraction);

// `fractions` as a scheme's offload list of `num_stages` (empty, or one fraction in [0, 1] per
// stage; all zero becomes empty); errors name `where` and the entry.
Status normalize_offload(std::vector<double>& fractions, int num_stages, const std::string& where);

// `stages` as a set of stage numbers of a scheme of `num_stages` (sorted, each once); errors name
// `where` and the entry out of range.
Status normalize_recompute(std::vector<int>& stages, int num_stages, const std::string& where);

// The zero-bubble scheduler's GraphConfig as JSON: {"n_stages", "n_micro", "cost_f", "cost_b",
// "cost_w" (lists, one per stage), "cost_comm" (a number, or a list of the n_stages - 1 hops between
// neighbouring stages, optionally with an ignored last entry), "mem_f", "mem_b", "mem_w" (lists or
// numbers), "max_mem" (list or number, > 0)}, plus gantry's "static_memory" and "flops". Returns
// the costs (one stage per device) and the microbatch count.
Result<std::pair<StageCosts, int>> read_stage_costs_json(const std::string& text, const std::string& source);

std::string scheme_to_json(const PipelineScheme& scheme, int indent = 1);
// Per-device task lists as a scheme's "schedule" writes them: [["F 0 0", "B 0 0", ...], ...].
Result<std::vector<std::vector<PipeTask>>> read_schedule_lists(const std::string& text, const std::string& source);
Result<PipelineScheme> scheme_from_json(const std::string& text, const std::string& source);

}  // namespace gantry
