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

// A device's booked slots (sorted, disjoint) and the idle gaps between them, so that finding the
// earliest fit scans only gaps: a scan over every slot made HEFT quadratic in the op count.
class DeviceTimeline {
 public:
  // Earliest start >= ready where `duration` fits between booked slots (insertion).
  double earliest(double ready, double duration) const {
    if (duration <= 0) {  // fits on any slot boundary: ready itself, or the end of the slot holding it
      auto it = std::upper_bound(slots_.begin(), slots_.end(), ready, [](double t, const Slot& s) { return t < s.end; });
      return it != slots_.end() && it->start < ready ? it->end : ready;
    }
    auto it = std::upper_bound(gaps_.begin(), gaps_.end(), ready, [](double t, const Slot& g) { return t < g.end; });
    for (; it != gaps_.end(); ++it) {
      const double begin = std::max(it->start, ready);
      if (begin + duration <= it->end) return begin;
    }
    return std::max(ready, tail_);
  }

  // Slots are kept in (start, end) order, so that an empty slot at t sits before a slot starting at
  // t and the ends stay sorted. An empty slot inside a gap splits it, as in the published scan,
  // where a later op cannot straddle it.
  void book(double begin, double end) {
    slots_.insert(std::upper_bound(slots_.begin(), slots_.end(), Slot{begin, end},
                                   [](const Slot& a, const Slot& b) { return a.start != b.start ? a.start < b.start : a.end < b.end; }),
                  Slot{begin, end});
    if (begin >= tail_) {
      if (begin > tail_) gaps_.push_back(Slot{tail_, begin});
      tail_ = std::max(tail_, end);
      return;
    }
    auto it = std::upper_bound(gaps_.begin(), gaps_.end(), begin, [](double t, const Slot& g) { return t < g.end; });
    if (it == gaps_.end() || it->start > begin) return;  // an empty slot on a busy boundary: nothing to split
    const Slot gap = *it;
    it = gaps_.erase(it);
    if (end < gap.end) it = gaps_.insert(it, Slot{end, gap.end});
    if (gap.start < begin) gaps_.insert(it, Slot{gap.start, begin});
  }


 private:
  std::vector<Slot> slots_, gaps_;
  double tail_ = 0;
};

}  // namespace

PlacementOutcome place_heft(const PlacementProblem& problem) {
  const Graph& g = problem.graph;
  const CostTable& costs = problem.costs;
  const int devices = problem.cluster.size();
  const std::vector<double> rank = upward_ranks(g, costs);
  const std::vector<OpId> order = order_by_decreasing(g, rank);

  PlannedSchedule plan(g.size());
  std::vector<DeviceTimeline> timeline(devices);
  for (OpId op : order) {
    int best = 0;
    double best_start = 0, best_finish = 0;
    for (int d = 0; d < devices; ++d) {
      const double duration = costs.op_time(op, d);
      const double begin = timeline[d].earliest(data_ready_time(g, costs, plan, op, d), duration);
      if (d == 0 || begin + duration < best_finish) {
        best = d;
        best_start = begin;
        best_finish = begin + duration;
      }
    }
    timeline[best].book(best_start, best_finish);
    plan.assign(op, best, best_start, best_finish);
  }
  PlacementOutcome outcome{"heft", plan.placement, 0, plan.length, 1, 0};
  outcome.makespan = evaluate_placement(problem, outcome.placement);
  return outcome;
}

}  // namespace gantry
