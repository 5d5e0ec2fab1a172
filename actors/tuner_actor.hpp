#pragma once
// The tuner actor drives one job's search: heuristics first, then the stored best if there is one,
// then batches handed to rollout actors until the budget (time, evaluations, patience) runs out or
// the job is cancelled. It keeps the best so far and sends every batch (as an episode) and every
// improvement (through put_if_better) to the store.
#include <caf/all.hpp>
#include <string>
#include <vector>

#include "actors/tune_job.hpp"

namespace gantry {

struct TunerConfig {
  const TuneProblem* problem = nullptr;
  const PlacementProblem* placement_problem = nullptr;
  const TuneOptions* options = nullptr;
  std::string job_id;
  Fingerprint graph, runtime;
  caf::actor store;
  std::vector<caf::actor> rollouts;
};

// Spawns a tuner; it handles start -> TuneOutcome (delivered when the job ends), then quits.
caf::actor spawn_tuner(caf::actor_system& system, TunerConfig config);

}  // namespace gantry
