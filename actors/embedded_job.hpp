#pragma once
// A job run on an embedded cluster: a coordinator and one worker in this process, over inproc://
// (or direct links under the test scheduler), with the very code that `gantry coordinator` and
// `gantry worker` run between hosts. `gantry tune` runs its tuning jobs here, `gantry train` its
// learner jobs; the job is submitted to the embedded coordinator and followed to its end.
#include <atomic>
#include <memory>

#include "actors/job_spec.hpp"
#include "actors/messages.hpp"
#include "actors/tune_job.hpp"

namespace gantry {

class Store;

struct EmbeddedJobOptions {
  int rollouts = 1;                           // the embedded worker's slots
  ExecutorDevices devices;                    // its executor devices (stage III measures on them)
  bool deterministic = false;                 // CAF's test scheduler, no threads (tests)
  int fail_spawn = -1;                        // fault injection (tests): this rollout cannot start
  const std::atomic<bool>* cancel = nullptr;  // set to stop early: the job ends CANCELLED
  JobHooks hooks;
};

Result<TuneOutcome> run_embedded_job(std::shared_ptr<Store> store, const JobSpec& spec, const EmbeddedJobOptions& options);

}  // namespace gantry
