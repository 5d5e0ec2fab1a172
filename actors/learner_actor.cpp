#include "actors/learner_actor.hpp"

#include "actors/blocking_job.hpp"
#include "actors/learner_run.hpp"
#include "learner/tensor_memory.hpp"
#include <cstdio>

namespace gantry {

namespace {

// The job's end as the coordinator records it: the first graph's best (the job's graph), the
// episodes as its evaluations, and what was stored as its message.
TuneOutcome outcome_of(const LearnerConfig& config, const Result<LearnerReport>& report) {
  TuneOutcome o;
  o.job_id = config.job_id;
  o.best.method = "doppler";
  if (!report) {
    o.state = JobState::failed;
    o.stop_reason = report.error().message;
    return o;
  }
  const LearnerReport& r = report.value();
  if (!r.nothing_learned.empty()) {  // stopped before any episode came back: a cancellation, else a failure
    o.state = r.stopped ? JobState::cancelled : JobState::failed;
    o.stop_reason = r.nothing_learned;
    return o;
  }
  const LearnedGraph& first = r.graphs.front();
  o.state = r.stopped ? JobState::cancelled : JobState::complete;
  o.best.placement = first.best;
  o.best.makespan = first.best_makespan;
  o.best_heuristic = "cp";
  o.heuristic_makespan = first.teacher_makespan;
  o.evaluations = r.episodes;
  o.batches = r.batches;
  o.seconds = r.seconds;
  o.rollout_seconds = r.rollout_seconds;
  o.graph = first.graph;
  o.runtime = first.runtime;
  char ratios[96];
  std::snprintf(ratios, sizeof ratios, "best %.3fx and greedy %.3fx the cp teacher%s", r.best_ratio, r.greedy_ratio,
                r.measured ? ", measured" : "");
  o.stop_reason = "policy " + r.policy + " stored: " + std::to_string(r.episodes) + " episodes, " + ratios +
                  (r.graphs.size() > 1 ? " (mean of " + std::to_string(r.graphs.size()) + " graphs)" : "") +
                  (r.stopped ? "; stopped early" : "");
  return o;
}

}  // namespace

caf::actor spawn_learner(caf::actor_system& system, LearnerConfig config) {
  const auto stop = config.stop;
  return spawn_blocking_job(system, [&system, config = std::move(config)] {
    LearnerHooks hooks;
    hooks.on_progress = config.hooks.on_learning;
    hooks.should_stop = [stop = config.stop] { return stop->load(); };
    hooks.shutting_down = [shutdown = config.shutdown] { return shutdown->load(); };
    hooks.checkpoints = config.checkpoints;
    auto report = run_learner(system, config.store, config.pool, config.spec, config.job_id, config.cache, hooks,
                              config.first_sequence);
    release_tensor_memory();  // the model and its batches are gone; a coordinator lives on
    if (report && report.value().nothing_learned.empty() && config.hooks.on_learned) config.hooks.on_learned(report.value());
    return outcome_of(config, report);
  }, stop);
}

}  // namespace gantry
