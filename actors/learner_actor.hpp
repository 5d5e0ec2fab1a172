#pragma once
// The learner actor runs one learner job (JobSpec kind "train") for the coordinator, as a tuner
// actor runs a tuning job: start -> TuneOutcome when the job ends (then it quits). Training
// blocks, so it is a blocking job (actors/blocking_job.hpp): a cancellation reaches it through
// the shared `stop` flag, polled between batches.
#include <atomic>
#include <caf/all.hpp>
#include <memory>
#include <string>

#include "actors/blocking_job.hpp"
#include "actors/job_spec.hpp"
#include "actors/messages.hpp"

namespace gantry {

class ProblemCache;

struct LearnerConfig : BlockingJobContext {
  ProblemCache* cache = nullptr;
  long first_sequence = 1;  // of its batch summaries (a rerun after a restart goes on numbering)
  // Set (with stop) when the coordinator shuts down: the learner stores nothing and keeps its
  // checkpoint for the rerun after the restart.
  std::shared_ptr<std::atomic<bool>> shutdown = std::make_shared<std::atomic<bool>>(false);
  bool checkpoints = true;  // a durable job (a restarted coordinator reruns it) keeps checkpoints
};

caf::actor spawn_learner(caf::actor_system& system, LearnerConfig config);

}  // namespace gantry
