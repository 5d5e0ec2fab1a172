#pragma once
// A job whose run blocks its thread (a learner in training, the pipeline co-tuner), as an actor
// the coordinator starts and cancels like a tuner: start -> TuneOutcome when the run ends (then
// it quits). The actor is detached (a thread of its own); a cancellation reaches the run through
// the shared `stop` flag, which it polls, not through the mailbox it cannot read while it runs.
#include <atomic>
#include <caf/all.hpp>
#include <functional>
#include <memory>

#include "actors/job_spec.hpp"
#include "actors/messages.hpp"
#include "actors/tune_job.hpp"

namespace gantry {

// What every blocking job gets from the coordinator: its spec and id, the submitter's hooks, the
// store and pool actors, and the stop flag it polls.
struct BlockingJobContext {
  JobSpec spec;
  std::string job_id;
  JobHooks hooks;
  caf::actor store, pool;
  std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
};

caf::actor spawn_blocking_job(caf::actor_system& system, std::function<TuneOutcome()> run,
                              std::shared_ptr<std::atomic<bool>> stop);

}  // namespace gantry
