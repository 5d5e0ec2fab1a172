#pragma once
// Stage III's episodes: each one sampled by the policy (a rollout on this thread) and then run for
// real on this machine's CPU devices (executor/), its makespan the median of the measured runs. One
// request at a time and nothing else running meanwhile: rollout threads or another measurement on
// the same cores would slow the one being timed. The teachers' makespans are measured the same
// way (measured_teachers), so rewards stay relative to the teacher on the same clock.
#include <deque>
#include <vector>

#include "executor/measurement.hpp"
#include "learner/episode_source.hpp"
#include "learner/trainer.hpp"

namespace gantry {

class MeasuredEpisodeSource : public EpisodeSource {
 public:
  MeasuredEpisodeSource(const std::vector<TrainingProblem>& problems, ExecOptions exec);

  int slots() const override { return 1; }
  void submit(EpisodeRequest request) override;
  std::optional<Result<EpisodeBatch>> next(double wait_seconds) override;

 private:
  const std::vector<TrainingProblem>& problems_;
  ExecOptions exec_;
  std::deque<EpisodeRequest> queue_;
};

// The problems with each teacher's makespan replaced by the measured makespan of its placement.
Result<std::vector<TrainingProblem>> measured_teachers(const std::vector<TrainingProblem>& problems,
                                                       const ExecOptions& exec);

// A stage III result on one clock: the trainer simulates its final greedy episode and may keep it
// as the best, so each graph's greedy placement and best placement are measured here and the
// better measured one is the best.
Status measure_outcomes(const PolicyWeights& weights, const std::vector<TrainingProblem>& problems,
                        const ExecOptions& exec, TrainResult* result);

}  // namespace gantry
