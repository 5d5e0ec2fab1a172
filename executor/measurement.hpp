#pragma once
// What an executor measures: every timed run's makespan, the median run's per-op and per-transfer
// times, and (when asked) the values of the graph's outputs. Times are seconds from the run's start.
#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.hpp"

namespace gantry {

struct ExecOptions {
  int repeats = 3;          // timed runs; the median is the measurement
  int warmup = 1;           // untimed runs first (allocator, caches, lazy initialisation)
  // Each device runs its list in order (pipeline schedules) instead of work-conserving dispatch.
  bool fixed_order = false;
  std::vector<std::vector<OpId>> order;
  bool throttle_links = false;  // a transfer lasts at least the cluster path's latency + bytes / bandwidth
  bool pin_threads = true;      // pin device d's threads to core d mod cores, where the OS allows it
  bool keep_outputs = false;    // return the values of the ops without successors
  // CUDA: the devices that share a GPU get disjoint sets of its SMs (green contexts) instead of
  // sharing all of them through streams. One stream per device.
  bool sm_partitions = false;
};

struct OpRecord {
  OpId op = 0;
  int device = 0;
  double start = 0, end = 0;
};

struct TransferRecord {
  OpId op = 0;  // whose output travelled
  int from = 0, to = 0;
  double start = 0, end = 0;
  double bytes = 0;
};

struct RunRecord {
  double makespan = 0;
  std::vector<OpRecord> ops;            // by op id
  std::vector<TransferRecord> transfers;  // in completion order
};

struct OutputTensor {
  OpId op = 0;
  std::vector<std::int64_t> shape;
  std::vector<double> values;  // row-major
};

struct Measurement {
  std::string backend;           // "cpu"
  std::string layout;            // how the devices map onto the hardware, where the backend says
  std::vector<double> makespans; // every timed run, in order
  double median = 0, min = 0, max = 0;
  RunRecord median_run;
  std::vector<OutputTensor> outputs;  // with keep_outputs: one per op without successors, by op id

  // (max - min) / median: how much the runs disagree.
  double spread() const { return median > 0 ? (max - min) / median : 0; }
};

}  // namespace gantry
