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

struct DopplerState;

class Simulator {
 public:
  // `graph` and `costs` must outlive the simulator; `cluster` gives stream counts per device.
  Simulator(const Graph& graph, const CostTable& costs, const Cluster& cluster, SimOptions options = {});
  ~Simulator();
  Simulator(Simulator&&) noexcept;

  const SimOptions& options() const { return options_; }
  void set_options(const SimOptions& options) { options_ = options; }

  // A placement the engine can run: one device index in range per op, priorities (if any) one per
  // op and finite. The error names the first offending op.
  Status check(const Placement& placement) const;

  // The hot path for search: makespan only, the mean over options().noise_samples noise draws.
  // `device` has one entry per op and must have passed check() (the loop trusts it); `priority`
  // (higher first) is used with Dispatch::priority. Returns +inf on a fixed-order deadlock.
  double makespan(const std::int32_t* device, const double* priority = nullptr);
  // Checks the placement first: throws std::invalid_argument with check()'s message.
  double makespan(const Placement& placement);

  // A full run with metrics (and timelines when options().record) of noise draw 0. `order` gives
  // each device's op list for Dispatch::fixed_order. A placement that fails check() gives a result
  // with completed = false, makespan = +inf and the error.
  SimResult run(const Placement& placement, const std::vector<std::vector<OpId>>* order = nullptr);

 private:
  struct State;
  double simulate(const std::int32_t* device, const double* priority,
                  const std::vector<std::vector<OpId>>* order, std::uint64_t noise_seed, SimResult* out);
  double simulate_doppler(const std::int32_t* device, SimResult* out);
  std::string describe_deadlock(const std::vector<std::vector<OpId>>& order, const std::int32_t* device,
                                int done) const;

  const Graph& graph_;
  const CostTable& costs_;
  std::vector<int> device_streams_;
  SimOptions options_;
  std::unique_ptr<State> state_;
  std::unique_ptr<DopplerState> doppler_;  // built on the first DOPPLER-compatible run
};

// max(critical path with each op on its fastest device, total fastest work / total streams), with
// the streams the runtime `options` give each device (--streams, one in DOPPLER mode): no placement
// can beat it under that runtime without noise.
double makespan_lower_bound(const Graph& graph, const CostTable& costs, const Cluster& cluster,
                            const SimOptions& options);

}  // namespace gantry
