#include "core/host_offload.hpp"

#include <algorithm>
#include <limits>

namespace gantry {

bool HostCopyPlan::empty() const {
  for (const auto& list : offloads)
    if (!list.empty()) return false;
  return true;
}

HostCopyPlan host_copy_plan(const PipelineScheme& scheme, const StageCosts& costs) {
  const int devices = scheme.num_devices();
  HostCopyPlan plan;
  plan.offloads.resize(devices);
  plan.reloads.resize(devices);
  plan.issued_after.resize(devices);
  if (!costs.offloads()) return plan;
  for (int d = 0; d < devices; ++d) {
    const auto& order = scheme.schedule[d];
    std::vector<int> position;  // of each B whose activations come back, in the device's order
    for (int i = 0; i < static_cast<int>(order.size()); ++i) {
      const PipeTask& t = order[i];
      if (!(costs.offload[t.stage] > 0) || t.op == PipeOp::W) continue;
      if (t.op == PipeOp::F) {
        plan.offloads[d].push_back(t);
      } else {
        const int j = static_cast<int>(position.size()) - kCopiesBackInFlight;
        plan.reloads[d].push_back(t);
        plan.issued_after[d].push_back(std::max(i - scheme.reload_ahead, j >= 0 ? position[j] : -1));
        position.push_back(i);
      }
    }
  }
  return plan;
}

double host_copy_time(const StageCosts& costs, int stage) {
  return costs.offload[stage] / costs.host_bandwidth[stage];
}

double peak_memory(const std::vector<MemoryEvent>& tasks, const std::vector<MemoryEvent>& copies_out,
                   const std::vector<MemoryEvent>& copies_back) {
  std::size_t t = 0, o = 0, b = 0;
  double held = 0, peak = 0;
  const double inf = std::numeric_limits<double>::infinity();
  while (t < tasks.size() || o < copies_out.size() || b < copies_back.size()) {
    const double at_t = t < tasks.size() ? tasks[t].time : inf, at_o = o < copies_out.size() ? copies_out[o].time : inf,
                 at_b = b < copies_back.size() ? copies_back[b].time : inf;
    if (at_o <= at_t && at_o <= at_b) held += copies_out[o++].delta;
    else if (at_t <= at_b) held += tasks[t++].delta;
    else held += copies_back[b++].delta;
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace gantry
