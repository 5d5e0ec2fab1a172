#include "actors/pool_task_queue.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "actors/messages.hpp"

namespace gantry {

struct PoolTaskQueue::Answers {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Answer> queue;
  void push(Answer a) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(std::move(a));
    }
    ready.notify_one();
  }
};

namespace {

caf::behavior task_proxy(caf::event_based_actor* self, caf::actor pool, std::string job, int priority,
                         std::shared_ptr<PoolTaskQueue::Answers> answers) {
  self->monitor(pool);
  self->set_down_handler([=](const caf::down_msg&) {
    answers->push({-1, make_error("the rollout pool stopped")});
    self->quit();
  });
  return {
      [=](run_task_atom, RolloutTask task, long tag) {
        self->request(pool, caf::infinite, run_task_atom::value, job, priority, std::move(task))
            .then([=](const TaskResult& r) { answers->push({tag, r}); },
                  [=](const caf::error& e) { answers->push({tag, make_error(error_text(self->system(), e))}); });
      },
  };
}

}  // namespace

PoolTaskQueue::PoolTaskQueue(caf::actor_system& system, caf::actor pool, std::string job, int priority)
    : system_(system), pool_(std::move(pool)), job_(std::move(job)), answers_(std::make_shared<Answers>()) {
  proxy_ = system_.spawn(task_proxy, pool_, job_, priority, answers_);
}

PoolTaskQueue::~PoolTaskQueue() {
  withdraw();
  caf::anon_send_exit(proxy_, caf::exit_reason::user_shutdown);
}

void PoolTaskQueue::submit(RolloutTask task, long tag) { caf::anon_send(proxy_, run_task_atom::value, std::move(task), tag); }

std::optional<PoolTaskQueue::Answer> PoolTaskQueue::next(double wait_seconds) {
  std::unique_lock<std::mutex> lock(answers_->mutex);
  if (!answers_->ready.wait_for(lock, std::chrono::duration<double>(wait_seconds), [&] { return !answers_->queue.empty(); }))
    return std::nullopt;
  Answer out = std::move(answers_->queue.front());
  answers_->queue.pop_front();
  return out;
}

void PoolTaskQueue::withdraw() { caf::anon_send(pool_, withdraw_atom::value, job_); }

int PoolTaskQueue::slots(const std::string& kind) const {
  caf::scoped_actor self{system_};
  int slots = 0;
  self->request(pool_, caf::infinite, slots_atom::value, kind).receive([&](int n) { slots = n; }, [&](const caf::error&) { slots = 0; });
  return slots;
}

}  // namespace gantry
