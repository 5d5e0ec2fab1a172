#include "actors/pool_episode_source.hpp"

#include "actors/episode_task.hpp"
#include "actors/messages.hpp"
#include "actors/rollout_task.hpp"

namespace gantry {

namespace {

Result<EpisodeBatch> batch_of(const PoolTaskQueue::Answer& answer) {
  if (!answer.result) return answer.tag < 0 ? answer.result.error() : make_error("the rollout pool failed: " + answer.result.error().message);
  const TaskResult& r = answer.result.value();
  if (!r.error.empty()) return make_error("an episodes task failed on worker " + r.worker + ": " + r.error);
  if (r.withdrawn) return make_error("an episodes task was withdrawn");
  return decode_episode_batch(r.body);
}

}  // namespace

PoolEpisodeSource::PoolEpisodeSource(caf::actor_system& system, caf::actor pool, std::string job,
                                     const std::vector<ProblemSpec>& specs, int priority)
    : pool_(pool), tasks_(system, pool, std::move(job), priority) {
  for (const ProblemSpec& spec : specs) {
    caf::anon_send(pool_, add_problem_atom::value, spec);
    problems_.push_back(problem_key(spec));
  }
}

PoolEpisodeSource::~PoolEpisodeSource() {
  tasks_.withdraw();  // before the problems go: nothing queued is left to need them
  for (const Fingerprint& key : problems_) caf::anon_send(pool_, drop_problem_atom::value, key);
}

int PoolEpisodeSource::slots() const { return tasks_.slots(kEpisodesTask) + 1; }

void PoolEpisodeSource::submit(EpisodeRequest request) {
  RolloutTask task;
  task.kind = kEpisodesTask;
  task.problem = problems_.at(request.problem);
  task.body = encode_body(request);
  task.sequence = ++sequence_;
  asked_[sequence_] = {request.problem, request.version};
  tasks_.submit(std::move(task), sequence_);
}

std::optional<Result<EpisodeBatch>> PoolEpisodeSource::next(double wait_seconds) {
  auto answer = tasks_.next(wait_seconds);
  if (!answer) return std::nullopt;
  Result<EpisodeBatch> batch = batch_of(*answer);
  auto asked = asked_.find(answer->tag);
  if (batch && asked != asked_.end()) {  // which graph and version it is for is what was asked
    batch.value().problem = asked->second.first;
    batch.value().version = asked->second.second;
  }
  if (asked != asked_.end()) asked_.erase(asked);
  return batch;
}

}  // namespace gantry
