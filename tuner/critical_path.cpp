// The DOPPLER critical-path teacher (Kwok & Ahmad's HLFET/ETF family): among the ops whose
// predecessors are all placed, take the one with the highest bottom level; put it on the device
// where it can start earliest (device free and inputs arrived), appending to that device.
#include <queue>

#include "tuner/graph_levels.hpp"
#include "tuner/list_schedule.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

PlacementOutcome place_critical_path(const PlacementProblem& problem) {
  const Graph& g = problem.graph;
  const CostTable& costs = problem.costs;
  const int devices = problem.cluster.size();
  const std::vector<double> rank = upward_ranks(g, costs);

  auto lower_priority = [&](OpId a, OpId b) { return rank[a] < rank[b] || (rank[a] == rank[b] && a > b); };
  std::priority_queue<OpId, std::vector<OpId>, decltype(lower_priority)> frontier(lower_priority);
  std::vector<int> unplaced_preds(g.size());
  for (OpId op = 0; op < g.size(); ++op) {
    unplaced_preds[op] = static_cast<int>(g.preds(op).size());
    if (unplaced_preds[op] == 0) frontier.push(op);
  }
  PlannedSchedule plan(g.size());
  std::vector<double> device_free(devices, 0.0);
  while (!frontier.empty()) {
    const OpId op = frontier.top();
    frontier.pop();
    int best = 0;
    double best_start = 0;
    for (int d = 0; d < devices; ++d) {
      double begin = std::max(device_free[d], data_ready_time(g, costs, plan, op, d));
      if (d == 0 || begin < best_start) {
        best = d;
        best_start = begin;
      }
    }
    const double end = best_start + costs.op_time(op, best);
    device_free[best] = end;
    plan.assign(op, best, best_start, end);
    for (OpId v : g.succs(op))
      if (--unplaced_preds[v] == 0) frontier.push(v);
  }
  PlacementOutcome outcome{"cp", plan.placement, 0, plan.length, 1, 0};
  outcome.makespan = evaluate_placement(problem, outcome.placement);
  return outcome;
}

}  // namespace gantry
