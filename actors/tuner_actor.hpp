#pragma once
// The tuner actor drives one job's search: heuristics first (episode 0 of the job), then the stored
// best if there is one,
// then annealing batches run by the rollout pool until the budget (time, evaluations, patience) runs
// out or the job is cancelled. It keeps one annealing chain per batch in flight (as many as the
// pool has slots, or the job's parallelism), the best so far, and sends every batch (as an
// episode) and every improvement (through put_if_better) to the store.
#include <caf/all.hpp>
#include <memory>
#include <string>

#include "actors/job_spec.hpp"
#include "actors/messages.hpp"

namespace gantry {

struct TunerConfig {
  std::shared_ptr<const BuiltProblem> problem;
  JobSpec spec;
  JobHooks hooks;
  std::string job_id;
  Fingerprint graph, runtime;
  caf::actor store, pool;
  bool timers = true;  // the budget clock's tick (off under the test scheduler)
  // Each batch's summary goes to the store's episodes (what a resumed job counts). Background
  // improvement runs keep none: nothing resumes them, and they run whenever the cluster is idle
  // (a summary per batch: 301 in a 30 s job on two rollout slots, some 860,000 a day).
  bool record_episodes = true;
  // A job that ran before (its coordinator was killed) goes on from its stored episodes and best:
  // the budgets count what those episodes spent, batch numbers continue, the heuristics do not run
  // again (their result is the stored best).
  struct Resume {
    bool active = false;
    long evaluations = 0;     // committed by the earlier run (its episodes)
    long next_sequence = 1;   // after its last episode
    double seconds = 0;       // the earlier run's time
  } resume;
};

// Spawns a tuner; it handles start -> TuneOutcome (delivered when the job ends, then it quits) and
// cancel (the job ends CANCELLED with its best).
caf::actor spawn_tuner(caf::actor_system& system, TunerConfig config);

}  // namespace gantry
