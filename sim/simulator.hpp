#pragma once
// The discrete-event engine shared by placement and pipelines. A Simulator owns its buffers and is
// reused across runs (one per thread): no allocation happens in the event loop, and one run costs
// O((V + E) log V).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cost_model.hpp"
#include "core/graph.hpp"
#include "core/placement.hpp"
#include "sim/sim_options.hpp"
#include "sim/sim_result.hpp"

namespace gantry {

struct DopplerEdges;

class Simulator {
 public:
  // `graph` and `costs` must outlive the simulator; `cluster` gives stream counts per device.
  Simulator(const Graph& graph, const CostTable& costs, const Cluster& cluster, SimOptions options = {});
  ~Simulator();
  Simulator(Simulator&&) noexcept;

  const SimOptions& options() const { return options_; }
  void set_options(const SimOptions& options) { options_ = options; }

  // The hot path for search: makespan only. `device` has one entry per op; `priority` (higher
  // first) is used with Dispatch::priority. Returns +inf on a fixed-order deadlock.
  double makespan(const std::int32_t* device, const double* priority = nullptr);
  double makespan(const Placement& placement) {
    return makespan(placement.device.data(), placement.has_priority() ? placement.priority.data() : nullptr);
  }

  // A full run with metrics (and timelines when options().record). `order` gives each device's
  // op list for Dispatch::fixed_order.
  SimResult run(const Placement& placement, const std::vector<std::vector<OpId>>* order = nullptr);

 private:
  struct State;
  double simulate(const std::int32_t* device, const double* priority,
                  const std::vector<std::vector<OpId>>* order, SimResult* out);
  double simulate_doppler(const std::int32_t* device, SimResult* out);
  std::string describe_deadlock(const std::vector<std::vector<OpId>>& order, const std::int32_t* device,
                                int done) const;

  const Graph& graph_;
  const CostTable& costs_;
  std::vector<int> device_streams_;
  SimOptions options_;
  std::unique_ptr<State> state_;
  std::unique_ptr<DopplerEdges> doppler_edges_;  // built on first DOPPLER-compatible run
};

// max(critical path with each op on its fastest device, total fastest work / total streams):
// no placement can beat it.
double makespan_lower_bound(const Graph& graph, const CostTable& costs, const Cluster& cluster);

}  // namespace gantry
