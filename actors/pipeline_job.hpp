#pragma once
// A pipeline tuning job (JobSpec kind "pipeline"): the bubble-aware co-tuner of partition,
// placement and schedule (tuner/pipeline/pipeline_tuner.hpp) on the actor spine. It starts from
// the zero-bubble baselines and the problem's stored best, evaluates each step's moves on the
// rollout pool's workers (pipeline-moves tasks, in this process or on other hosts), and stores
// the tuned scheme as the problem's best (keyed by the problem's and the runtime's fingerprints),
// so `query best` returns it and the next job resumes from it. The same code runs in a
// coordinator (a submitted job) and in the embedded cluster of `gantry pipeline tune`.
#include <atomic>
#include <caf/all.hpp>
#include <functional>
#include <memory>
#include <string>

#include "actors/blocking_job.hpp"
#include "actors/job_spec.hpp"
#include "actors/messages.hpp"
#include "tuner/pipeline/pipeline_tuner.hpp"

namespace gantry {

struct BuiltProblem;

struct PipelineJobReport {
  PipelineTuneResult tuned;
  bool resumed = false;        // the stored best was among the starts
  double resumed_time = 0;
  bool stored = false;         // the tuned scheme became the stored best
  std::string store_error;     // storing it failed: why (the scheme is still the report's)
  double lower_bound = 0;      // of any scheme: pipeline_work_bound (work / devices, by speed on mixed devices)
  std::int64_t tasks = 0;      // pipeline-moves tasks sent to the pool
  Fingerprint problem, runtime;
};

struct PipelineJobConfig : BlockingJobContext {
  std::shared_ptr<const BuiltProblem> problem;
};

// Blocks its thread for the whole run (call it from a blocking job's thread or a command's main
// thread, never from the scheduler). An error when the job cannot start (a malformed problem).
Result<PipelineJobReport> run_pipeline_job(caf::actor_system& system, const PipelineJobConfig& config);

// The job as an actor for the coordinator (actors/blocking_job.hpp): start -> TuneOutcome.
caf::actor spawn_pipeline_tuner(caf::actor_system& system, PipelineJobConfig config);

// The settings' errors name the setting as `gantry pipeline tune` spells it.
Status check_pipeline_job_spec(const JobSpec& spec);

}  // namespace gantry
