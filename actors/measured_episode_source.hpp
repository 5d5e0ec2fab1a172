#pragma once
// Stage III's episodes: each one sampled by the policy (a rollout on the learner's thread) and then
// run for real on a worker's executor devices (a measure task through the rollout pool,
// actors/pool_measurer.hpp), its makespan the median of the measured runs. One request at a time:
// the worker runs a measurement alone, and two on the same cores would slow each other. The
// teachers' makespans are measured the same way (measured_teachers), so rewards stay relative to
// the teacher on the same clock.
#include <deque>
#include <vector>

#include "actors/pool_measurer.hpp"
#include "learner/episode_source.hpp"
#include "learner/trainer.hpp"

namespace gantry {

class MeasuredEpisodeSource : public EpisodeSource {
 public:
  // Problem i of the trainer is problem i of `measurer`.
  MeasuredEpisodeSource(const std::vector<TrainingProblem>& problems, PoolMeasurer& measurer);

  int slots() const override { return 1; }
  void submit(EpisodeRequest request) override;
  std::optional<Result<EpisodeBatch>> next(double wait_seconds) override;

 private:
  const std::vector<TrainingProblem>& problems_;
  PoolMeasurer& measurer_;
  std::deque<EpisodeRequest> queue_;
};

// The problems with each teacher's makespan replaced by the measured makespan of its placement.
Result<std::vector<TrainingProblem>> measured_teachers(const std::vector<TrainingProblem>& problems, PoolMeasurer& measurer);

// A stage III result on one clock: the trainer simulates its final greedy episode and may keep it
// as the best, so each graph's greedy placement and best placement are measured here and the
// better measured one is the best.
Status measure_outcomes(const PolicyWeights& weights, const std::vector<TrainingProblem>& problems, PoolMeasurer& measurer,
                        TrainResult* result);

}  // namespace gantry
