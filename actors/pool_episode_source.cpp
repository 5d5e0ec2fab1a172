#include "actors/pool_episode_source.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "actors/episode_task.hpp"
#include "actors/messages.hpp"
#include "actors/rollout_task.hpp"

namespace gantry {

struct PoolEpisodeSource::Answers {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Result<EpisodeBatch>> queue;
  void push(Result<EpisodeBatch> r) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(std::move(r));
    }
    ready.notify_one();
  }
};

namespace {

Result<EpisodeBatch> batch_of(const TaskResult& r) {
  if (!r.error.empty()) return make_error("an episodes task failed on worker " + r.worker + ": " + r.error);
  if (r.withdrawn) return make_error("an episodes task was withdrawn");
  return decode_episode_batch(r.body);
}

// Asks the pool for each task and hands the answer to the waiting trainer. A pool that stops
// (its node shuts down) answers no more: the trainer hears that instead of waiting.
caf::behavior episode_proxy(caf::event_based_actor* self, caf::actor pool, std::string job, int priority,
                            std::shared_ptr<PoolEpisodeSource::Answers> answers) {
  self->monitor(pool);
  self->set_down_handler([=](const caf::down_msg&) {
    answers->push(make_error("the rollout pool stopped"));
    self->quit();
  });
  return {
      [=](run_task_atom, RolloutTask task, int problem, std::uint64_t version) {
        self->request(pool, caf::infinite, run_task_atom::value, job, priority, std::move(task))
            .then([=](const TaskResult& r) {
                    // Which graph and version the batch is for is what was asked, not what came back.
                    Result<EpisodeBatch> batch = batch_of(r);
                    if (batch) {
                      batch.value().problem = problem;
                      batch.value().version = version;
                    }
                    answers->push(std::move(batch));
                  },
                  [=](const caf::error& e) { answers->push(make_error("the rollout pool failed: " + self->system().render(e))); });
      },
  };
}

}  // namespace

PoolEpisodeSource::PoolEpisodeSource(caf::actor_system& system, caf::actor pool, std::string job,
                                     const std::vector<ProblemSpec>& specs, int priority)
    : system_(system), pool_(std::move(pool)), job_(std::move(job)), answers_(std::make_shared<Answers>()) {
  for (const ProblemSpec& spec : specs) {
    caf::anon_send(pool_, add_problem_atom::value, spec);
    problems_.push_back(problem_key(spec));
  }
  proxy_ = system_.spawn(episode_proxy, pool_, job_, priority, answers_);
}

PoolEpisodeSource::~PoolEpisodeSource() {
  caf::anon_send(pool_, withdraw_atom::value, job_);
  for (const Fingerprint& key : problems_) caf::anon_send(pool_, drop_problem_atom::value, key);
  caf::anon_send_exit(proxy_, caf::exit_reason::user_shutdown);
}

int PoolEpisodeSource::slots() const {
  caf::scoped_actor self{system_};
  int slots = 0;
  self->request(pool_, caf::infinite, slots_atom::value, std::string(kEpisodesTask))
      .receive([&](int n) { slots = n; }, [&](const caf::error&) { slots = 0; });
  return slots + 1;
}

void PoolEpisodeSource::submit(EpisodeRequest request) {
  RolloutTask task;
  task.kind = kEpisodesTask;
  task.problem = problems_.at(request.problem);
  task.body = encode_body(request);
  task.sequence = ++sequence_;
  caf::anon_send(proxy_, run_task_atom::value, std::move(task), request.problem, request.version);
}

std::optional<Result<EpisodeBatch>> PoolEpisodeSource::next(double wait_seconds) {
  std::unique_lock<std::mutex> lock(answers_->mutex);
  if (!answers_->ready.wait_for(lock, std::chrono::duration<double>(wait_seconds), [&] { return !answers_->queue.empty(); }))
    return std::nullopt;
  Result<EpisodeBatch> out = std::move(answers_->queue.front());
  answers_->queue.pop_front();
  return out;
}

}  // namespace gantry
