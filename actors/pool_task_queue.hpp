#pragma once
// A blocking thread's line to the rollout pool: tasks go to the pool through a small proxy actor
// (the pool answers requests, which a plain thread cannot wait for with a deadline), and the
// answers come back to the thread in the order they arrive, each with the tag it was sent with.
// The proxy watches the pool: when the pool stops (its node shuts down) the thread hears that at
// once instead of waiting for answers that will never come. A learner's episodes and the
// pipeline tuner's moves both travel this way.
#include <caf/all.hpp>
#include <memory>
#include <optional>
#include <string>

#include "actors/rollout_task.hpp"
#include "core/result.hpp"

namespace gantry {

class PoolTaskQueue {
 public:
  struct Answer {
    long tag = 0;
    Result<TaskResult> result = make_error("no answer");  // an error: the pool failed the task or stopped
  };

  // `job` names the tasks in the pool (withdrawn together); `priority` orders them among other jobs'.
  PoolTaskQueue(caf::actor_system& system, caf::actor pool, std::string job, int priority);
  ~PoolTaskQueue();  // withdraws what is still queued

  void submit(RolloutTask task, long tag);
  // The next answer, or nothing within `wait_seconds`.
  std::optional<Answer> next(double wait_seconds);
  // The job's queued tasks come back withdrawn (TaskResult::withdrawn); leased ones finish.
  void withdraw();
  // Slots of live workers that run `kind`.
  int slots(const std::string& kind) const;

  struct Answers;  // what the proxy hands the thread

 private:
  caf::actor_system& system_;
  caf::actor pool_, proxy_;
  std::string job_;
  std::shared_ptr<Answers> answers_;
};

}  // namespace gantry
