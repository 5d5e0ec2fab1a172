#include "actors/pipeline_job.hpp"

#include <optional>

#include "actors/blocking_job.hpp"
#include "actors/log_line.hpp"
#include "actors/pipeline_problem.hpp"
#include "actors/pool_move_evaluator.hpp"
#include "actors/problem_spec.hpp"
#include "actors/store_requests.hpp"
#include "core/text.hpp"
#include "core/unix_time.hpp"
#include "sim/model_version.hpp"

namespace gantry {

namespace {

// The stored best of this problem on this runtime as a starting candidate (a second job resumes
// from it); nothing when there is none, it is of another pipeline model, or it cannot be read.
std::optional<std::pair<PipelineCandidate, double>> stored_start(caf::scoped_actor& self, const caf::actor& store,
                                                                 const PipelineSource& source) {
  auto best = ask_store<StoredBest>(self, store, get_best_atom::value, source.problem, source.runtime);
  if (!best || !best.value().error.empty()) {
    log_line("gantry: the stored best cannot be read, tuning afresh: " +
             (best ? best.value().error : best.error().message));
    return {};
  }
  const ScheduleRecord& r = best.value().record;
  if (!best.value().found || !r.is_pipeline() || r.model_version != kPipelineModelVersion) return {};
  auto candidate = candidate_from_json(r.candidate, "the stored best");
  if (!candidate) {
    log_line("gantry: " + candidate.error().message + "; tuning afresh");
    return {};
  }
  return std::pair{std::move(candidate).value(), r.makespan};
}

ScheduleRecord best_record(const PipelineSource& source, const PipelineJobReport& report, const PipelineScheme& scheme,
                           const std::string& job_id) {
  ScheduleRecord record;
  record.graph = source.problem;
  record.cluster = source.runtime;
  record.graph_label = "pipeline: " + source.problem_label + ", " + std::to_string(source.microbatches) + " microbatches";
  record.cluster_name = source.cluster_name.empty() ? "(stage costs)" : source.cluster_name;
  record.method = "pipeline-tune";
  record.sim = "pipeline";
  record.unit = "s";
  record.makespan = report.tuned.best_result.iteration_time;
  record.lower_bound = report.lower_bound;
  record.job_id = job_id;
  record.found_at = unix_now();
  record.evaluations = report.tuned.evaluations;
  record.model_version = kPipelineModelVersion;
  record.scheme = scheme_to_json(scheme, -1);
  record.candidate = candidate_to_json(report.tuned.best);
  return record;
}

// Stores the tuned scheme when it beats the stored best; whether it did.
Result<bool> store_best(caf::scoped_actor& self, const caf::actor& store, const ScheduleRecord& record) {
  auto stored = ask_store<StoreReply>(self, store, put_best_atom::value, record);
  if (!stored) return stored.error();
  if (!stored.value().ok) return make_error("storing the tuned scheme: " + stored.value().error);
  auto synced = ask_store<StoreReply>(self, store, sync_atom::value);
  if (!synced) return synced.error();
  if (!synced.value().ok) return make_error("storing the tuned scheme: " + synced.value().error);
  return stored.value().stored;
}

TuneOutcome outcome_of(const PipelineJobConfig& config, const Result<PipelineJobReport>& report) {
  TuneOutcome o;
  o.job_id = config.job_id;
  o.best.method = "pipeline-tune";
  if (!report) {
    o.state = JobState::failed;
    o.stop_reason = report.error().message;
    return o;
  }
  const PipelineJobReport& r = report.value();
  const PipelineTuneResult& t = r.tuned;
  const bool failed = !t.failure.empty() || !r.store_error.empty();
  o.state = failed ? JobState::failed : t.stopped ? JobState::cancelled : JobState::complete;
  const bool fits = t.best_result.feasible();
  o.best.makespan = fits ? t.best_result.iteration_time : 0;
  o.best.evaluations = t.evaluations;
  o.best_heuristic = "best zero-bubble start";
  o.heuristic_makespan = t.start_result.feasible() ? t.start_result.iteration_time : 0;
  o.resumed = r.resumed;
  o.resumed_makespan = r.resumed_time;
  o.evaluations = t.evaluations;
  o.batches = r.tasks;
  o.seconds = t.history.empty() ? 0 : t.history.back().seconds;
  o.graph = r.problem;
  o.runtime = r.runtime;
  if (!fits) {
    o.stop_reason = "no scheme found that runs within the memory limit (" + std::to_string(t.evaluations) + " evaluations)";
  } else {
    o.stop_reason = "iteration " + format_seconds(o.best.makespan) + " (start " + format_seconds(o.heuristic_makespan) +
                    ", lower bound " + format_seconds(r.lower_bound) + "): " + std::to_string(t.evaluations) +
                    " evaluations, " + std::to_string(t.passes) + " passes" +
                    (t.budget_ended ? ", ended by the budget" : t.stopped ? ", stopped early" : "") + "; " +
                    (r.stored ? "stored as the best" : r.store_error.empty() ? "the stored best is at least as fast" : "not stored");
  }
  if (!t.failure.empty()) o.stop_reason = t.failure + "; " + o.stop_reason;
  if (!r.store_error.empty()) o.stop_reason = "the scheme was not stored: " + r.store_error + "; " + o.stop_reason;
  return o;
}

}  // namespace

Status check_pipeline_job_spec(const JobSpec& spec) {
  if (!spec.problem.is_pipeline()) return make_error("a pipeline job needs a pipeline problem (its problem has no \"pipeline\")");
  const PipelineJobSpec& p = spec.pipeline;
  if (p.max_chunks < 1 || p.max_chunks > 16)
    return make_error("--max-chunks " + std::to_string(p.max_chunks) + ": expected 1 to 16 virtual stages per device");
  if (!(p.min_gain >= 0 && p.min_gain <= 1)) return make_error("--min-gain must be between 0 and 1");
  if (p.max_passes < 1) return make_error("max_passes must be >= 1");
  if (!(p.walk_share >= 0 && p.walk_share <= 10)) return make_error("--walk-share must be between 0 and 10");
  if (!(p.kick_share >= 0 && p.kick_share <= 10)) return make_error("--kick-share must be between 0 and 10");
  return Ok{};
}

Result<PipelineJobReport> run_pipeline_job(caf::actor_system& system, const PipelineJobConfig& config) {
  const JobSpec& spec = config.spec;
  if (Status ok = check_pipeline_job_spec(spec); !ok) return ok.error();
  if (!config.problem || !config.problem->pipeline) return make_error("a pipeline job needs a built pipeline problem");
  const PipelineSource& source = *config.problem->pipeline;
  if (Status fits = check_static_memory_fits(source); !fits) return fits.error();
  auto problem = parse_pipeline_problem(spec.problem.pipeline_json, "the job's pipeline problem");
  if (!problem) return problem.error();
  auto starts = pipeline_tuning_starts(problem.value());
  if (!starts) return starts.error();
  if (starts.value().empty())
    return make_error("no layout fits the model's layers on " + std::to_string(source.stages->devices()) + " devices");
  PipelineJobReport report;
  report.problem = source.problem;
  report.runtime = source.runtime;
  caf::scoped_actor self{system};
  CandidateEvaluator evaluator(*source.stages, source.microbatches, source.links);
  if (auto resume = stored_start(self, config.store, source)) {
    if (auto checked = evaluator.evaluate(resume->first); !checked) {  // e.g. written by another gantry
      log_line("gantry: the stored best does not fit this problem (" + checked.error().message + "); tuning afresh");
    } else {
      report.resumed = true;
      report.resumed_time = resume->second;
      starts.value().push_back(std::move(resume->first));
    }
  }

  PoolMoveEvaluator pool_moves(system, config.pool, config.job_id, config.problem->key, spec.priority,
                               [stop = config.stop] { return stop->load(); });
  PipelineTuneOptions options;
  options.budget_seconds = spec.budget_seconds;
  options.max_evaluations = spec.budget_evaluations;
  options.max_chunks = spec.pipeline.max_chunks;
  options.min_gain = spec.pipeline.min_gain;
  options.max_passes = spec.pipeline.max_passes;
  options.seed = spec.seed;
  options.anneal_share = spec.pipeline.walk_share;
  options.kick_share = spec.pipeline.kick_share;
  options.on_progress = config.hooks.on_pipeline_progress;
  options.should_stop = [stop = config.stop] { return stop->load(); };
  options.evaluate_moves = [&](const std::vector<PipelineCandidate>& moves) { return pool_moves(moves); };
  auto tuned = tune_pipeline(evaluator, starts.value(), options);
  if (!tuned) return tuned.error();
  report.tuned = std::move(tuned).value();
  report.tasks = pool_moves.tasks();

  auto built = evaluator.build(report.tuned.best);
  if (!built) return built.error();
  const auto& [scheme, costs] = built.value();
  auto bound = pipeline_work_bound(source);
  if (!bound) return bound.error();
  report.lower_bound = bound.value();
  if (report.tuned.best_result.feasible()) {
    auto stored = store_best(self, config.store, best_record(source, report, scheme, config.job_id));
    if (stored) report.stored = stored.value();
    else report.store_error = stored.error().message;  // the report still carries the scheme
  }
  return report;
}

caf::actor spawn_pipeline_tuner(caf::actor_system& system, PipelineJobConfig config) {
  const auto stop = config.stop;
  return spawn_blocking_job(system, [&system, config = std::move(config)] {
    auto report = run_pipeline_job(system, config);
    if (report && config.hooks.on_pipeline_tuned) config.hooks.on_pipeline_tuned(report.value());
    return outcome_of(config, report);
  }, stop);
}

}  // namespace gantry
