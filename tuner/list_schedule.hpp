#pragma once
// Shared pieces of the list schedulers (critical-path teacher, HEFT): the planned finish times of
// placed ops and the time a device would have all inputs of an op.
#include <vector>

#include "core/cost_model.hpp"
#include "core/graph.hpp"
#include "core/placement.hpp"

namespace gantry {

struct PlannedSchedule {
  Placement placement;          // device and priority (= minus planned start: earlier runs first)
  std::vector<double> start, finish;
  double length = 0;

  explicit PlannedSchedule(int ops) : start(ops, 0.0), finish(ops, 0.0) {
    placement.device.assign(ops, -1);
    placement.priority.assign(ops, 0.0);
  }
  void assign(OpId op, int device, double begin, double end) {
    placement.device[op] = device;
    placement.priority[op] = -begin;
    start[op] = begin;
    finish[op] = end;
    if (end > length) length = end;
  }
};

// Earliest time all inputs of `op` are on `device`, given its placed predecessors.
double data_ready_time(const Graph& graph, const CostTable& costs, const PlannedSchedule& plan, OpId op, int device);

}  // namespace gantry
