#pragma once
#include <string>
#include <vector>

#include "core/graph.hpp"

namespace gantry {

struct OpTiming {
  int device = 0;
  double start = 0, end = 0;
};

struct TransferTiming {
  OpId src_op = 0;
  int from = 0, to = 0;
  double start = 0, end = 0, bytes = 0;
};

struct SimResult {
  double makespan = 0;
  bool completed = true;      // false when a fixed order cannot make progress (deadlock)
  std::string error;          // why it did not complete
  std::vector<double> busy;   // compute time per device
  std::vector<double> peak_memory;  // per device, when tracked
  int transfers = 0;
  double transfer_bytes = 0;
  double transfer_time = 0;          // summed duration of all transfers
  double exposed_transfer_time = 0;  // transfer time during which the receiving device sat idle
  std::vector<OpTiming> ops;               // per op, when recorded
  std::vector<TransferTiming> transfer_log;  // when recorded

  // Clears the per-run counters (and sizes the timeline when recording) before an engine runs.
  void start_run(int ops, bool record) {
    transfers = 0;
    transfer_bytes = transfer_time = 0;
    if (record) {
      this->ops.assign(ops, OpTiming{});
      transfer_log.clear();
    }
  }
};

}  // namespace gantry
