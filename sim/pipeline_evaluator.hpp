#pragma once
// The search loop's pipeline simulator. A scheme's structure (stages, placement, microbatches and
// which (microbatch, stage) pairs run a fused BW) is compiled once; each evaluation then runs the
// per-device orders with new costs on flat arrays, without a Graph, a Simulator or a timeline.
// It gives simulate_pipeline's iteration time, busy time and peak memory exactly: each device runs
// its order one task at a time, a task starts when the device is free and its input has arrived,
// and a transfer between two devices waits for the directed link (LinkModel::contention, FIFO in
// the order the producing device finishes) or not (unlimited). Activation offload runs each
// device's two copy engines as devices of their own, with the copies of host_copy_plan and peak
// memory from the time-ordered memory events (core/host_offload.hpp, peak_memory). Reports (traces, exposed
// transfer time, overlap) still come from simulate_pipeline.
#include <cstdint>
#include <vector>

#include "core/host_offload.hpp"
#include "core/pipeline_scheme.hpp"
#include "core/result.hpp"
#include "sim/sim_options.hpp"

namespace gantry {

struct PipelineEvaluation {
  bool completed = false;           // false: the orders deadlock
  double iteration_time = 0;
  double bubble_ratio = 0;          // idle compute / (devices x time)
  std::vector<double> busy;         // per device
  std::vector<double> peak_memory;  // per device, static memory included
  bool out_of_memory = false;       // a device's peak exceeds its costs.max_mem (> 0)
  // Device -> start time of each task in its order; filled only when the evaluator is asked
  // (set_record_starts), for moves that look at where the bubbles are.
  std::vector<std::vector<double>> start;
  bool feasible() const { return completed && !out_of_memory; }
};

// When a stage's hand-off that leaves its device at `end` and takes `cost` arrives: on a
// contended link (`link_free` not null: when the directed link is next free) it waits for the
// link, then holds it until it arrives. The rule every pipeline engine shares with the event
// simulator; a directed link only carries its source device's hand-offs, in that device's order.
inline double hand_off_arrival(double end, double cost, double* link_free) {
  const double begin = link_free && *link_free > end ? *link_free : end;
  if (link_free) *link_free = begin + cost;
  return begin + cost;
}

class PipelineEvaluator {
 public:
  // The structure of `scheme` (which must pass PipelineScheme::check()).
  static Result<PipelineEvaluator> compile(const PipelineScheme& scheme);

  // Whether evaluations fill PipelineEvaluation::start (off by default: the search loop's moves
  // do not need it).
  void set_record_starts(bool record) { record_starts_ = record; }

  // Runs `scheme`'s per-device orders with `costs` (one entry per stage). Errors: another structure,
  // a task listed twice or on the wrong device, costs of another stage count. `out` is reused
  // across calls, so the search loop allocates nothing.
  Status evaluate(const PipelineScheme& scheme, const StageCosts& costs, LinkModel links, PipelineEvaluation& out);
  Result<PipelineEvaluation> evaluate(const PipelineScheme& scheme, const StageCosts& costs,
                                      LinkModel links = LinkModel::contention);

 private:
  PipelineEvaluator() = default;
  // Task ids: ((kind * microbatches) + m) * stages + s, kinds F, B, W, BW as PipeOp numbers them,
  // then the copy of an F's activations to host memory and the copy back before its B.
  static constexpr int kOffload = 4, kReload = 5, kKinds = 6;
  std::int32_t id(int kind, int m, int s) const { return static_cast<std::int32_t>((kind * micro_ + m) * stages_ + s); }
  std::int32_t id(PipeOp op, int m, int s) const { return id(static_cast<int>(op), m, s); }
  Status load_orders(const PipelineScheme& scheme);
  // The copy engines' orders (devices D + d out, 2D + d back) and what issues each copy back.
  void load_host_copies(const PipelineScheme& scheme, const StageCosts& costs);
  void run(const StageCosts& costs, LinkModel links, PipelineEvaluation& out);

  int stages_ = 0, devices_ = 0, micro_ = 0;
  std::vector<int> placement_;             // stage -> device
  std::vector<std::uint8_t> fused_;        // (m, s) -> runs BW
  std::int32_t tasks_ = 0;                 // task count of the structure
  // Per evaluation, reused:
  std::vector<std::int32_t> order_, order_begin_;  // device-major task ids
  std::vector<std::uint32_t> stamp_;               // id -> evaluation number that listed it
  std::uint32_t evaluation_ = 0;
  std::vector<std::int8_t> pending_;               // id -> inputs not yet finished
  std::vector<double> ready_;                      // id -> when its inputs have arrived
  std::vector<double> link_free_;                  // directed device pair -> free from
  std::vector<std::int32_t> position_, worklist_;  // device -> next index into its order
  std::vector<double> device_free_, memory_;
  bool record_starts_ = false;
  // With offload (`copies_`): id -> the copy back its end issues (-1: none), and per device the
  // memory events of its tasks, copies out and copies back (peak_memory's three lists).
  bool copies_ = false;
  std::vector<std::int32_t> issues_;
  std::vector<std::vector<MemoryEvent>> task_events_, out_events_, back_events_;
};

}  // namespace gantry
