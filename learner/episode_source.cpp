#include "learner/episode_source.hpp"

#include <chrono>
#include <random>

#include "learner/placement_env.hpp"
#include "learner/policy_runner.hpp"
#include "sim/simulator.hpp"

namespace gantry {

Result<EpisodeBatch> run_episode_request(const TrainingProblem& problem, const EpisodeRequest& request) {
  const auto begin = std::chrono::steady_clock::now();
  const PolicyWeights& w = *request.weights;
  if (w.config.ablation == Ablation::gdp && w.config.devices != problem.cluster->size())
    return make_error("a gdp policy for " + std::to_string(w.config.devices) + " devices cannot place on " +
                      problem.cluster->name() + " (" + std::to_string(problem.cluster->size()) + " devices)");
  PolicyRunner runner(w, problem.features, *problem.graph);
  PlacementEnv env(*problem.graph, *problem.costs, problem.features);
  Simulator sim(*problem.graph, *problem.costs, *problem.cluster, problem.sim);
  std::mt19937_64 rng(request.seed);
  EpisodeBatch batch;
  batch.problem = request.problem;
  batch.version = request.version;
  RolloutOptions o = request.options;
  o.version = request.version;
  o.problem = request.problem;
  for (int i = 0; i < request.count; ++i) batch.episodes.push_back(run_episode(runner, env, sim, o, rng));
  batch.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return batch;
}

LocalEpisodeSource::LocalEpisodeSource(const std::vector<TrainingProblem>& problems, int threads) : problems_(problems) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { serve(); });
}

LocalEpisodeSource::~LocalEpisodeSource() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  work_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void LocalEpisodeSource::submit(EpisodeRequest request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(request));
  }
  work_ready_.notify_one();
}

std::optional<Result<EpisodeBatch>> LocalEpisodeSource::next(double wait_seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!result_ready_.wait_for(lock, std::chrono::duration<double>(wait_seconds), [&] { return !done_.empty(); })) return std::nullopt;
  Result<EpisodeBatch> out = std::move(done_.front());
  done_.pop_front();
  return out;
}

void LocalEpisodeSource::serve() {
  for (;;) {
    EpisodeRequest request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      request = std::move(queue_.front());
      queue_.pop_front();
    }
    Result<EpisodeBatch> result = run_episode_request(problems_[request.problem], request);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.push_back(std::move(result));
    }
    result_ready_.notify_one();
  }
}

}  // namespace gantry
