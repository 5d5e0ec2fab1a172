#pragma once
// Episodes from the rollout pool: each request becomes an `episodes` task (actors/episode_task.hpp)
// that the pool leases to any worker slot running that kind, in this process or on another host,
// so a learner trains on episodes from the whole cluster. The trainer's thread blocks in next(),
// on a PoolTaskQueue (actors/pool_task_queue.hpp).
#include <caf/all.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/pool_task_queue.hpp"
#include "actors/problem_spec.hpp"
#include "learner/episode_source.hpp"

namespace gantry {

class PoolEpisodeSource : public EpisodeSource {
 public:
  // Problem i of the trainer is `specs[i]` (registered with the pool here, so workers can fetch
  // it). `job` names the tasks in the pool (withdrawn together at the end).
  // `priority`: the job's, for the pool's queue (higher first, as tuner jobs' tasks).
  PoolEpisodeSource(caf::actor_system& system, caf::actor pool, std::string job, const std::vector<ProblemSpec>& specs,
                    int priority = 0);
  ~PoolEpisodeSource() override;  // withdraws what is still queued and drops the problems

  // Slots of live workers that run `episodes`, plus one queued so no slot waits for the learner
  // (at least 1, so a request waits in the pool for a worker to come).
  int slots() const override;
  void submit(EpisodeRequest request) override;
  std::optional<Result<EpisodeBatch>> next(double wait_seconds) override;

 private:
  caf::actor pool_;
  std::vector<Fingerprint> problems_;
  PoolTaskQueue tasks_;
  // Which graph and policy version each task asked for (what its batch is), by its sequence.
  std::map<long, std::pair<int, std::uint64_t>> asked_;
  long sequence_ = 0;
};

}  // namespace gantry
