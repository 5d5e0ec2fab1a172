#pragma once
// Where the trainer gets episodes: requests go out tagged with a policy version and come back
// as batches, possibly generated while the learner trained on (so a batch may be stale). The
// local source runs rollouts on threads of this process; the cluster's rollout pool is another.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/result.hpp"
#include "learner/episode.hpp"
#include "learner/policy_weights.hpp"
#include "learner/rollout.hpp"
#include "learner/training_problem.hpp"

namespace gantry {

struct EpisodeRequest {
  int problem = 0;
  std::uint64_t version = 0;
  std::shared_ptr<const PolicyWeights> weights;  // the policy of that version
  int count = 1;
  RolloutOptions options;
  std::uint64_t seed = 1;
};

struct EpisodeBatch {
  int problem = 0;
  std::uint64_t version = 0;
  std::vector<Episode> episodes;
  double seconds = 0;  // rollout time spent (simulation included)
};

class EpisodeSource {
 public:
  virtual ~EpisodeSource() = default;
  // Requests worth keeping in flight to keep every rollout slot busy.
  virtual int slots() const = 0;
  virtual void submit(EpisodeRequest request) = 0;
  // Waits up to `wait_seconds` for the next finished request (in any order): nullopt when none
  // finished in time (so a trainer can notice it was stopped); an error ends training.
  virtual std::optional<Result<EpisodeBatch>> next(double wait_seconds) = 0;
};

// Rollouts on `threads` threads of this process, each with its own environment and simulator per
// problem and the plain-C++ policy of the newest version it has seen.
class LocalEpisodeSource : public EpisodeSource {
 public:
  LocalEpisodeSource(const std::vector<TrainingProblem>& problems, int threads);
  ~LocalEpisodeSource() override;

  int slots() const override { return static_cast<int>(threads_.size()) + 1; }
  void submit(EpisodeRequest request) override;
  std::optional<Result<EpisodeBatch>> next(double wait_seconds) override;

 private:
  void serve();
  const std::vector<TrainingProblem>& problems_;
  std::mutex mutex_;
  std::condition_variable work_ready_, result_ready_;
  std::deque<EpisodeRequest> queue_;
  std::deque<Result<EpisodeBatch>> done_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Runs one request here and now (what every rollout slot does, local or remote).
Result<EpisodeBatch> run_episode_request(const TrainingProblem& problem, const EpisodeRequest& request);

}  // namespace gantry
