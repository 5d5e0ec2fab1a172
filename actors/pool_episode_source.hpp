#pragma once
// Episodes from the rollout pool: each request becomes an `episodes` task (actors/episode_task.hpp)
// that the pool leases to any worker slot running that kind, in this process or on another host,
// so a learner trains on episodes from the whole cluster. The trainer's thread blocks in next();
// a small proxy actor asks the pool and queues the answers for it.
#include <caf/all.hpp>
#include <memory>
#include <string>
#include <vector>

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

  struct Answers;  // what the proxy actor hands the trainer's thread

 private:
  caf::actor_system& system_;
  caf::actor pool_, proxy_;
  std::string job_;
  std::vector<Fingerprint> problems_;
  std::shared_ptr<Answers> answers_;
  long sequence_ = 0;
};

}  // namespace gantry
