// HEFT (Topcuoglu, Hariri, Wu; TPDS 2002): ops in decreasing upward rank; each goes to the device
// that finishes it earliest, allowed into an idle gap between already scheduled ops (insertion).
#include <algorithm>
#include <numeric>

#include "tuner/graph_levels.hpp"
#include "tuner/list_schedule.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

namespace {

struct Slot {
  double start, end;
};

// Earliest start >= ready on a device with sorted busy slots, fitting `duration` into a gap.
double earliest_gap(const std::vector<Slot>& slots, double ready, double duration) {
  double candidate = ready;
  for (const Slot& s : slots) {
    if (candidate + duration <= s.start) return candidate;
    candidate = std::max(candidate, s.end);
  }
  return candidate;
}

}  // namespace

PlacementOutcome place_heft(const PlacementProblem& problem) {
  const Graph& g = problem.graph;
  const CostTable& costs = problem.costs;
  const int devices = problem.cluster.size();
  const std::vector<double> rank = upward_ranks(g, costs);
  std::vector<int> topo_index(g.size());
  for (std::size_t i = 0; i < g.topo_order().size(); ++i) topo_index[g.topo_order()[i]] = static_cast<int>(i);
  std::vector<OpId> order(g.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](OpId a, OpId b) {
    return rank[a] != rank[b] ? rank[a] > rank[b] : topo_index[a] < topo_index[b];
  });

  PlannedSchedule plan(g.size());
  std::vector<std::vector<Slot>> slots(devices);
  for (OpId op : order) {
    int best = 0;
    double best_start = 0, best_finish = 0;
    for (int d = 0; d < devices; ++d) {
      const double duration = costs.op_time(op, d);
      const double begin = earliest_gap(slots[d], data_ready_time(g, costs, plan, op, d), duration);
      if (d == 0 || begin + duration < best_finish) {
        best = d;
        best_start = begin;
        best_finish = begin + duration;
      }
    }
    auto& list = slots[best];
    list.insert(std::upper_bound(list.begin(), list.end(), best_start,
                                 [](double t, const Slot& s) { return t < s.start; }),
                Slot{best_start, best_finish});
    plan.assign(op, best, best_start, best_finish);
  }
  PlacementOutcome outcome{"heft", plan.placement, 0, plan.length, 1, 0};
  outcome.makespan = evaluate_placement(problem, outcome.placement);
  return outcome;
}

}  // namespace gantry
