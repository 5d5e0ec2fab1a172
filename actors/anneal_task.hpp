#pragma once
// The `anneal` task kind: one batch of a tuning job's annealing chain. The chains live in the
// job's tuner (actors/tuner_actor.cpp); a batch says where its chain stands and how far to go, so
// any slot can run it, and answers where the walk ended, the chain's next start.
#include <memory>
#include <string>
#include <string_view>

#include "actors/rollout_task.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"

namespace gantry {

struct BuiltProblem;
struct SlotScratch;

inline constexpr const char* kAnnealTask = "anneal";

// Anneal from `start`, perturbed first when `perturb` > 0.
struct BatchRequest {
  Placement start;
  std::uint64_t seed = 1;
  long evaluations = 0;   // at most this many simulator runs, exactly this many unless `seconds`
                          // runs out first (0 = no limit)
  double seconds = 0.2;   // at most this long (0 = no limit)
  double t_start = 0.02, t_end = 0.002;
  double perturb = 0;     // share of ops moved to random devices before annealing
  int fail_times = 0;     // fault injection (tests): the batch fails while its attempt < fail_times
};

struct BatchResult {
  long evaluations = 0;
  double best_makespan = 0;
  double mean_makespan = 0;
  Placement best;
  Placement last;         // where the walk ended: the chain's next start
};

std::string encode_body(const BatchRequest& request);
std::string encode_body(const BatchResult& result);
Result<BatchRequest> decode_batch_request(std::string_view body);
Result<BatchResult> decode_batch_result(std::string_view body);

// Runs a batch on a worker: the answer's body, or why it failed. `scratch` is the slot's
// simulator for the problem it served last.
Result<std::string> run_anneal_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                    std::unique_ptr<SlotScratch>& scratch);

}  // namespace gantry
