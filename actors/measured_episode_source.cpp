#include "actors/measured_episode_source.hpp"

#include <chrono>

#include "tuner/placement_method.hpp"

namespace gantry {

MeasuredEpisodeSource::MeasuredEpisodeSource(const std::vector<TrainingProblem>& problems, PoolMeasurer& measurer)
    : problems_(problems), measurer_(measurer) {}

void MeasuredEpisodeSource::submit(EpisodeRequest request) { queue_.push_back(std::move(request)); }

std::optional<Result<EpisodeBatch>> MeasuredEpisodeSource::next(double) {
  if (queue_.empty()) return std::nullopt;
  const EpisodeRequest request = std::move(queue_.front());
  queue_.pop_front();
  const TrainingProblem& problem = problems_[static_cast<std::size_t>(request.problem)];
  const auto begin = std::chrono::steady_clock::now();
  auto batch = run_episode_request(problem, request);
  if (!batch) return batch;
  for (Episode& episode : batch.value().episodes) {
    auto m = measurer_.measure(request.problem, replay_placement(problem, episode));
    if (!m && measurer_.stopping()) return std::nullopt;  // the trainer sees the stop and ends
    if (!m) return Result<EpisodeBatch>(make_error(problem.label + ": measuring an episode: " + m.error().message));
    episode.makespan = m.value().answer.median;
  }
  batch.value().seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return batch;
}

Result<std::vector<TrainingProblem>> measured_teachers(const std::vector<TrainingProblem>& problems, PoolMeasurer& measurer) {
  std::vector<TrainingProblem> out = problems;
  for (std::size_t i = 0; i < out.size(); ++i) {
    TrainingProblem& p = out[i];
    const Placement teacher = place_critical_path(PlacementProblem{*p.graph, *p.cluster, *p.costs, p.sim}).placement;
    auto m = measurer.measure(static_cast<int>(i), teacher);
    if (!m) return make_error(p.label + ": measuring the teacher: " + m.error().message);
    p.teacher_makespan = m.value().answer.median;
  }
  return out;
}

Status measure_outcomes(const PolicyWeights& weights, const std::vector<TrainingProblem>& problems, PoolMeasurer& measurer,
                        TrainResult* result) {
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const TrainingProblem& p = problems[i];
    ProblemOutcome& outcome = result->problems.at(i);
    auto greedy = greedy_episode(weights, p);
    if (!greedy) return greedy.error();
    const Placement greedy_placement = replay_placement(p, greedy.value());
    auto greedy_run = measurer.measure(static_cast<int>(i), greedy_placement);
    if (!greedy_run) return make_error(p.label + ": measuring the greedy placement: " + greedy_run.error().message);
    outcome.greedy_makespan = greedy_run.value().answer.median;
    // The trainer may have kept the greedy placement as its best: one measurement serves both.
    const bool same = outcome.best.device == greedy_placement.device && outcome.best.priority == greedy_placement.priority;
    auto best_run = same ? greedy_run : measurer.measure(static_cast<int>(i), outcome.best);
    if (!best_run) return make_error(p.label + ": measuring the best placement: " + best_run.error().message);
    outcome.best_makespan = best_run.value().answer.median;
    if (outcome.greedy_makespan < outcome.best_makespan) {
      outcome.best_makespan = outcome.greedy_makespan;
      outcome.best = greedy_placement;
    }
  }
  return Ok{};
}

}  // namespace gantry
