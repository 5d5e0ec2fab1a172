#pragma once
// A job as submitted: what to tune and under which budget. Plain values, so a job can be queued,
// stored, sent to a coordinator and resumed after a restart.
#include <cstdint>
#include <string>

#include "actors/measure_task.hpp"
#include "actors/pipeline_job_spec.hpp"
#include "actors/problem_spec.hpp"
#include "actors/train_spec.hpp"

namespace gantry {

struct JobSpec {
  // "tune" (placement search), "train" (a DOPPLER learner), "pipeline" (the pipeline co-tuner) or
  // "measure" (run a placement for real on a worker's executor devices)
  std::string kind = "tune";
  ProblemSpec problem;              // a train job's first graph; a pipeline job's pipeline problem
  TrainSpec train;                  // kind "train" only
  PipelineJobSpec pipeline;         // kind "pipeline" only
  MeasureRequest measure;           // kind "measure" only; an empty placement measures the stored best
  double budget_seconds = 30;       // 0 = no time limit
  long budget_evaluations = 0;      // 0 = no evaluation limit
  double patience_seconds = 0;      // stop after this long without improvement (0 = never)
  double batch_seconds = 0.2;       // length of one batch (when batch_evaluations == 0), at most kLongestBatch
  long batch_evaluations = 0;       // fixed batch size instead (reproducible runs)
  std::uint64_t seed = 1;
  int parallelism = 0;              // batches in flight at most (0 = every slot of the pool)
  int priority = 0;                 // higher runs first; equal priorities run in submission order
  long fail_batch = -1;             // fault injection (tests): this batch fails on its worker,
  int fail_times = 1;               // this many times in a row
};

// The longest batch a job may ask for, in seconds. A batch, once running on a worker, runs to its
// end: it is the step of a job's progress, of a cancel and of a lost worker's recovery.
inline constexpr double kLongestBatch = 60;
// A batch of fixed evaluations is bounded by its count: 1e8 is minutes on large graphs (a batch
// that outlives its lease runs again elsewhere, and fails the job at the last attempt).
inline constexpr long kMostBatchEvaluations = 100'000'000;
// Batches in flight for one job: more than any pool's slots (each is a queued task).
inline constexpr int kMostParallelism = 65'536;

}  // namespace gantry
