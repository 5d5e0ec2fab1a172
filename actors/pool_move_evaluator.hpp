#pragma once
// The pipeline tuner's moves evaluated by the rollout pool: a step's candidates are cut into
// `pipeline-moves` tasks (actors/pipeline_moves_task.hpp), one per free slot of the workers that
// run the kind (fewer when a share would be too small to pay for its messages), and the answers
// are put back in the moves' order, so the tuner chooses as it would alone. Blocks the calling
// thread (the pipeline job's own) until every share is back, the pool stops, or `should_stop`
// turns true (then the job's queued shares are withdrawn and the step ends without a result).
#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "actors/pool_task_queue.hpp"
#include "core/fingerprint.hpp"
#include "core/result.hpp"
#include "tuner/pipeline/pipeline_candidate.hpp"

namespace gantry {

class PoolMoveEvaluator {
 public:
  // `problem`: the pipeline problem's key, registered with the pool (workers fetch its content).
  // `job` names the tasks in the pool; `priority` orders them among other jobs' tasks.
  PoolMoveEvaluator(caf::actor_system& system, caf::actor pool, std::string job, Fingerprint problem, int priority,
                    std::function<bool()> should_stop = {});

  Result<std::vector<std::optional<CandidateResult>>> operator()(const std::vector<PipelineCandidate>& moves);

  std::int64_t tasks() const { return tasks_; }

 private:
  int slots();  // refreshed every second: workers come and go

  PoolTaskQueue queue_;
  Fingerprint problem_;
  std::function<bool()> should_stop_;
  long sequence_ = 0;
  std::int64_t tasks_ = 0;
  int slots_ = 0;
  std::chrono::steady_clock::time_point slots_checked_{};
};

}  // namespace gantry
