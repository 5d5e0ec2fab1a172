#include "tuner/list_schedule.hpp"

#include <algorithm>

namespace gantry {

double data_ready_time(const Graph& graph, const CostTable& costs, const PlannedSchedule& plan, OpId op, int device) {
  double ready = 0;
  const Span<OpId> preds = graph.preds(op);
  const Span<EdgeId> edges = graph.in_edges(op);
  for (std::size_t k = 0; k < preds.size(); ++k) {
    const OpId p = preds[k];
    ready = std::max(ready, plan.finish[p] + costs.transfer_time(edges[k], plan.placement.device[p], device));
  }
  return ready;
}

}  // namespace gantry
