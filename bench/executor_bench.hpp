#pragma once
// `gantry bench executor`: the CPU backend's own cost per op, measured with empty ops (no
// operation, no flops: the kernel is an allocation of one float), so the makespan is dispatch:
// picking the ready op, gathering its inputs, timing it, releasing its successors. Shapes:
//   chain-1      a chain on one device (every op waits for the previous one)
//   fan-1        independent ops on one device (the ready queue never empties)
//   fan-2        independent ops over two devices (two threads share the runtime's lock)
//   pingpong-2   a chain alternating between two devices (each hop is a transfer: a copy by the
//                link's thread and two thread hand-offs), reported per hop
#include <string>
#include <vector>

namespace gantry {

struct ExecutorBenchRow {
  std::string shape;
  int ops = 0, devices = 0, runs = 0;
  double median_us_per_op = 0, min_us_per_op = 0, max_us_per_op = 0;
};

struct ExecutorBenchOptions {
  int ops = 20000;
  int repeats = 7;
  bool pin = true;
};

std::vector<ExecutorBenchRow> run_executor_bench(const ExecutorBenchOptions& options);

}  // namespace gantry
