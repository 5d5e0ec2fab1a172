#pragma once
// One DOPPLER episode's book-keeping: which ops may be chosen next (unplaced ops whose predecessors
// are all placed), and where a chosen op would start on each device. The timeline is a list
// schedule (an op starts when its device is free and its inputs have arrived), the same estimate
// the critical-path teacher (tuner/critical_path.cpp) plans with; the makespan that rewards an
// episode comes from the simulator, not from here.
//
// SEL chooses among a window of the ready ops: the kCandidateWindow of highest bottom level (ties:
// lowest op id, the teacher's own pick), so a step costs the same on a graph of 200 ops as on one
// of 20,000 whose frontier is hundreds wide (every candidate's features change at every step).
// The teacher's choices are always in the window, and an op of low level waits there only while
// more urgent ones are ready; below 64 ready ops the window is the whole frontier.
//
// SEL's features of a candidate v at this step, relative to the other candidates:
//   0 start: earliest start of v on any device, minus the soonest any candidate can start
//   1 ready: when v's inputs can first be on some device, minus the soonest of any candidate
//   2 level: the highest bottom level among the candidates minus v's (the teacher's key)
//   3 order: log1p of v's op id minus the lowest candidate id (what tells symmetric candidates
//     apart: among tied levels the teacher takes the lowest id; a position in the topological
//     order, which was here before, is not in id order, and the policy could not learn the pick)
//   4 top: 1 for the candidates of the highest bottom level (the teacher's choices), else 0: the
//     same key as 2 without its scale, which differs from graph to graph
//
// PLC's per-device features for op v on device d, each a time relative to the best device, in
// the graph's unit (scaled_time), and the device's index:
//   0 load: work already placed on d         3 free: when d finishes its last placed op
//   1 local inputs: transfers saved on d      4 start: earliest start of v on d
//   2 ready: when v's inputs are all on d     5 finish: earliest finish of v on d
//   6 index: d / devices (what tells devices of equal state apart: among tied starts the teacher
//     takes the lowest device; on transformer graphs on 8 devices the teacher with random ties
//     runs 1.2-1.3x longer)
//   7 soonest: 1 for the devices of earliest start (the teacher's choices), else 0: feature 4's
//     key without its scale
#include <set>
#include <utility>
#include <vector>

#include "core/cost_model.hpp"
#include "core/graph.hpp"
#include "core/placement.hpp"
#include "learner/graph_features.hpp"

namespace gantry {

// The most ready ops SEL chooses among at one step.
inline constexpr int kCandidateWindow = 64;

class PlacementEnv {
 public:
  PlacementEnv(const Graph& graph, const CostTable& costs, const GraphFeatures& features);

  void reset();
  bool done() const { return placed_ == graph_.size(); }
  int devices() const { return devices_; }
  // The ops that may be placed next (the window of the ready ones), most urgent first; the order
  // depends only on the actions.
  const std::vector<OpId>& candidates() const { return candidates_; }
  // Every ready op, the window's included.
  const std::vector<OpId>& topological_order() const { return graph_.topo_order(); }

  // kCandidateFeatures floats per candidate (in candidates() order) into `features`.
  void describe_candidates(float* features);
  // kDeviceFeatures floats per device into `features` and the earliest start per device into
  // `start` (devices() entries each).
  void describe(OpId op, float* features, double* start);
  // Places `op` (a candidate) on `device` starting at `start` (describe()'s value for it).
  void place(OpId op, int device, double start);

  // The teacher's choices: candidates of highest bottom level; devices of earliest start.
  void teacher_ops(std::vector<OpId>& out) const;
  void teacher_devices(const double* start, std::vector<int>& out) const;

  // Device per op and priority = minus the planned start, as the critical-path heuristic gives.
  Placement placement() const;
  double planned_length() const { return length_; }

 private:
  const Graph& graph_;
  const CostTable& costs_;
  const GraphFeatures& features_;
  int devices_;
  int placed_ = 0;
  double length_ = 0;
  std::set<std::pair<double, OpId>> frontier_;  // every ready op by (minus bottom level, id)
  std::vector<OpId> candidates_;                 // the first kCandidateWindow of frontier_
  std::vector<int> unplaced_preds_;
  std::vector<std::int32_t> device_;
  std::vector<double> start_, finish_;
  std::vector<double> load_, free_;
  std::vector<double> ready_, local_, finish_est_;  // scratch per device
  std::vector<double> candidate_ready_;              // [op x device]: when inputs can be there (candidates)
  std::vector<double> candidate_start_, candidate_soonest_;  // scratch per candidate
  void enter_candidates(OpId op);
  void refresh_window();
  std::pair<double, OpId> urgency(OpId op) const;
};

}  // namespace gantry
