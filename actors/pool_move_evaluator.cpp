#include "actors/pool_move_evaluator.hpp"

#include <algorithm>
#include <map>

#include "actors/pipeline_moves_task.hpp"
#include "actors/rollout_task.hpp"

namespace gantry {

namespace {

// Fewer moves than this in a share cost more in messages than they save in parallel evaluation
// (an evaluation at p=8, m=32 takes tens of microseconds; a task's round trip a few hundred).
constexpr std::size_t kMinMovesPerTask = 8;
constexpr double kStopPollSeconds = 0.05;

}  // namespace

PoolMoveEvaluator::PoolMoveEvaluator(caf::actor_system& system, caf::actor pool, std::string job, Fingerprint problem,
                                     int priority, std::function<bool()> should_stop)
    : queue_(system, std::move(pool), std::move(job), priority), problem_(problem), should_stop_(std::move(should_stop)) {}

int PoolMoveEvaluator::slots() {
  const auto now = std::chrono::steady_clock::now();
  if (slots_ > 0 && now - slots_checked_ < std::chrono::seconds(1)) return slots_;
  slots_ = queue_.slots(kPipelineMovesTask);
  slots_checked_ = now;
  return std::max(1, slots_);  // none yet: one share waits in the pool for a worker to come
}

Result<std::vector<std::optional<CandidateResult>>> PoolMoveEvaluator::operator()(const std::vector<PipelineCandidate>& moves) {
  std::vector<std::optional<CandidateResult>> out(moves.size());
  if (moves.empty()) return out;
  const std::size_t shares = std::max<std::size_t>(
      1, std::min<std::size_t>(static_cast<std::size_t>(slots()), moves.size() / kMinMovesPerTask));
  const std::size_t per_share = (moves.size() + shares - 1) / shares;
  struct Share {
    std::size_t first, count;
  };
  std::map<long, Share> pending;  // by the task's tag
  for (std::size_t first = 0; first < moves.size(); first += per_share) {
    const std::size_t count = std::min(per_share, moves.size() - first);
    RolloutTask task;
    task.kind = kPipelineMovesTask;
    task.problem = problem_;
    task.body = encode_body(std::vector<PipelineCandidate>(moves.begin() + first, moves.begin() + first + count));
    task.sequence = ++sequence_;
    pending[sequence_] = {first, count};
    queue_.submit(std::move(task), sequence_);
    ++tasks_;
  }
  std::string failure;
  bool withdrawn = false;
  while (!pending.empty()) {
    auto answer = queue_.next(kStopPollSeconds);
    if (!answer) {
      if (!withdrawn && should_stop_ && should_stop_()) {  // what is queued comes back withdrawn
        queue_.withdraw();
        withdrawn = true;
      }
      continue;
    }
    if (answer->tag < 0) return answer->result.error();  // the pool stopped: nothing more comes
    auto share = pending.find(answer->tag);
    if (share == pending.end()) continue;  // a step the tuner left already
    const Share s = share->second;
    pending.erase(share);
    if (!failure.empty()) continue;
    if (!answer->result) {
      failure = answer->result.error().message;
      continue;
    }
    const TaskResult& r = answer->result.value();
    if (r.withdrawn) {
      failure = "the tuning was stopped";
      continue;
    }
    if (!r.error.empty()) {
      failure = "a pipeline-moves task failed on worker " + r.worker + ": " + r.error;
      continue;
    }
    auto results = decode_move_results(r.body);
    if (!results) {
      failure = results.error().message;
      continue;
    }
    if (results.value().size() != s.count) {
      failure = "a pipeline-moves task answered " + std::to_string(results.value().size()) + " of " +
                std::to_string(s.count) + " moves";
      continue;
    }
    for (std::size_t k = 0; k < s.count; ++k)
      if (results.value()[k].ok) out[s.first + k] = results.value()[k].result;
  }
  if (withdrawn) return make_error("the tuning was stopped");
  if (!failure.empty()) return make_error(failure);
  return out;
}

}  // namespace gantry
