#pragma once
// A measurement job (JobSpec kind "measure"): runs a placement, or the problem's stored best, for
// real on a worker that offers the cluster's executor devices (a measure:cpu:N task through the
// rollout pool), then records the measured makespan with the stored best (when that is what ran,
// so `query best` shows simulated and measured times) and adds the run's op and transfer times to
// the store's profiles. Its outcome carries the measured median as the job's makespan and the
// simulator's prediction beside it. The same code serves `gantry execute --coordinator` and any
// client that submits such a job.
#include <caf/all.hpp>
#include <memory>

#include "actors/blocking_job.hpp"
#include "actors/pool_measurer.hpp"

namespace gantry {

struct BuiltProblem;

struct MeasureJobReport {
  PoolMeasurement measured;
  std::string placement_source;  // "the stored best (method, job)" or "the submitted placement"
  double simulated = 0;          // the simulator's makespan of the placement, in the graph's cost unit
  std::string unit;              // that unit ("s" when the times compare)
  bool recorded = false;         // kept with the stored best
  std::string warnings;          // what was not recorded, and why
};

struct MeasureJobConfig : BlockingJobContext {
  std::shared_ptr<const BuiltProblem> problem;
  double wait_for_worker_seconds = 30;
};

Status check_measure_job_spec(const JobSpec& spec);

// Blocks its thread until the measurement is done (or fails, or the job is stopped).
Result<MeasureJobReport> run_measure_job(caf::actor_system& system, const MeasureJobConfig& config);

// The job as an actor for the coordinator (actors/blocking_job.hpp): start -> TuneOutcome.
caf::actor spawn_measure_job(caf::actor_system& system, MeasureJobConfig config);

}  // namespace gantry
