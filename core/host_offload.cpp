#include "core/host_offload.hpp"

#include <algorithm>

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
    for (int i = 0; i < static_cast<int>(order.size()); ++i) {
      const PipeTask& t = order[i];
      if (!(costs.offload[t.stage] > 0) || t.op == PipeOp::W) continue;
      if (t.op == PipeOp::F) {
        plan.offloads[d].push_back(t);
      } else {
        plan.reloads[d].push_back(t);
        plan.issued_after[d].push_back(i - scheme.reload_ahead >= 0 ? i - scheme.reload_ahead : -1);
      }
    }
  }
  return plan;
}

double host_copy_time(const StageCosts& costs, int stage) {
  return costs.offload[stage] / costs.host_bandwidth[stage];
}

double peak_memory(std::vector<MemoryEvent>& events) {
  std::sort(events.begin(), events.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
    return a.time < b.time || (a.time == b.time && a.delta < b.delta);
  });
  double held = 0, peak = 0;
  for (const MemoryEvent& e : events) {
    held += e.delta;
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace gantry
