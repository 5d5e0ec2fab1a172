#include "actors/pool_move_evaluator.hpp"

#include <algorithm>

#include "actors/messages.hpp"
#include "actors/pipeline_moves_task.hpp"
#include "actors/rollout_task.hpp"

namespace gantry {

namespace {

// Fewer moves than this in a share cost more in messages than they save in parallel evaluation
// (an evaluation at p=8, m=32 takes tens of microseconds; a task's round trip a few hundred).
constexpr std::size_t kMinMovesPerTask = 8;

}  // namespace

PoolMoveEvaluator::PoolMoveEvaluator(caf::actor_system& system, caf::actor pool, std::string job, Fingerprint problem,
                                     int priority)
    : system_(system), pool_(std::move(pool)), job_(std::move(job)), problem_(problem), priority_(priority) {}

int PoolMoveEvaluator::slots() {
  const auto now = std::chrono::steady_clock::now();
  if (slots_ > 0 && now - slots_checked_ < std::chrono::seconds(1)) return slots_;
  caf::scoped_actor self{system_};
  self->request(pool_, caf::infinite, slots_atom::value, std::string(kPipelineMovesTask))
      .receive([&](int n) { slots_ = n; }, [&](const caf::error&) { slots_ = 0; });
  slots_checked_ = now;
  return std::max(1, slots_);  // none yet: one share waits in the pool for a worker to come
}

Result<std::vector<std::optional<CandidateResult>>> PoolMoveEvaluator::operator()(const std::vector<PipelineCandidate>& moves) {
  std::vector<std::optional<CandidateResult>> out(moves.size());
  if (moves.empty()) return out;
  const std::size_t shares = std::max<std::size_t>(
      1, std::min<std::size_t>(static_cast<std::size_t>(slots()), moves.size() / kMinMovesPerTask));
  const std::size_t per_share = (moves.size() + shares - 1) / shares;
  caf::scoped_actor self{system_};
  struct Share {
    std::size_t first, count;
  };
  std::vector<Share> sent;
  std::vector<caf::response_handle<caf::blocking_actor, caf::message, true>> answers;
  for (std::size_t first = 0; first < moves.size(); first += per_share) {
    const std::size_t count = std::min(per_share, moves.size() - first);
    RolloutTask task;
    task.kind = kPipelineMovesTask;
    task.problem = problem_;
    task.body = encode_body(std::vector<PipelineCandidate>(moves.begin() + first, moves.begin() + first + count));
    task.sequence = ++sequence_;
    sent.push_back({first, count});
    answers.push_back(self->request(pool_, caf::infinite, run_task_atom::value, job_, priority_, std::move(task)));
    ++tasks_;
  }
  std::string failure;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    answers[i].receive(
        [&](const TaskResult& r) {
          if (!failure.empty()) return;
          if (!r.error.empty()) return void(failure = "a pipeline-moves task failed on worker " + r.worker + ": " + r.error);
          if (r.withdrawn) return void(failure = "a pipeline-moves task was withdrawn");
          auto results = decode_move_results(r.body);
          if (!results) return void(failure = results.error().message);
          if (results.value().size() != sent[i].count)
            return void(failure = "a pipeline-moves task answered " + std::to_string(results.value().size()) + " of " +
                                  std::to_string(sent[i].count) + " moves");
          for (std::size_t k = 0; k < sent[i].count; ++k)
            if (results.value()[k].ok) out[sent[i].first + k] = results.value()[k].result;
        },
        [&](const caf::error& e) {
          if (failure.empty()) failure = "the rollout pool failed: " + system_.render(e);
        });
  }
  if (!failure.empty()) return make_error(failure);
  return out;
}

}  // namespace gantry
