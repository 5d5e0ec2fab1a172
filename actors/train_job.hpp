#pragma once
// A learner's training run on the cluster's rollout pool: without a coordinator, on the embedded
// cluster (a coordinator node and a worker in this process, as `gantry tune`), so episodes go
// through the same task kind, leases and workers as on a real cluster.
#include <functional>
#include <memory>
#include <vector>

#include "actors/problem_spec.hpp"
#include "learner/trainer.hpp"

namespace gantry {

class Store;

struct TrainJobOptions {
  int rollouts = 1;              // the embedded worker's slots
  std::shared_ptr<Store> store;  // the embedded coordinator's store
  std::string job = "train";     // names the job's tasks in the pool
};

// `specs[i]` is `problems[i]` as content (workers rebuild the problem from it).
Result<TrainResult> run_train_job(PolicyModel& model, const std::vector<TrainingProblem>& problems,
                                  const std::vector<ProblemSpec>& specs, const TrainOptions& options,
                                  const TrainJobOptions& job, const TrainHooks& hooks);

}  // namespace gantry
