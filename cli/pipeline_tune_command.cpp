// gantry pipeline tune: the bubble-aware co-tuner of partition, placement and schedule, with every
// baseline schedule x partition side by side.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/duration.hpp"
#include "cli/output_path.hpp"
#include "cli/pipeline_args.hpp"
#include "cli/stop_signals.hpp"
#include "cli/text_table.hpp"
#include "core/json_util.hpp"
#include "sim/blocking_deadlock.hpp"
#include "sim/pipeline_simulation.hpp"
#include "sim/timeline_export.hpp"
#include "tuner/pipeline/exact_pipeline.hpp"
#include "tuner/pipeline/pipeline_random_search.hpp"
#include "tuner/pipeline/pipeline_tuner.hpp"
#include "tuner/pipeline/schedule_registry.hpp"
#include "actors/embedded_job.hpp"
#include "actors/pipeline_job.hpp"
#include "cli/job_args.hpp"
#include "cli/schedule_source.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct PipelineTuneArgs {
  PipelineArgs pipeline;
  std::string budget;
  std::int64_t max_evaluations = 0;
  int max_chunks = 4;
  double min_gain = 0.001;
  double walk_share = 1.0;
  double kick_share = 2.0;
  bool search_baselines = false;
  std::uint64_t seed = 1;
  std::string data;  // the store (empty with --no-store)
  bool no_store = false;
  std::string exact;  // --exact TIME_LIMIT: also search the exact optimum (small problems)
  bool exact_cold = false;  // the exact search without the tuner's time as its first bound
  int rollouts = 0;   // the embedded worker's slots (0: hardware threads)
  int priority = 0;   // with --coordinator
  bool detach = false;  // with --coordinator: submit and print the job id
  RemoteArgs remote;  // run the job on a coordinator instead
};

// What the job found, from its report (embedded) or from the coordinator's record and store.
struct TunedRun {
  PipelineCandidate best, start;
  std::int64_t evaluations = 0;
  int passes = -1;  // not known of a remote job
  bool budget_ended = false, stopped = false, stored = false, resumed = false;
  double seconds = 0, resumed_time = 0;
  std::string job_id, failure;
};

struct Row {
  std::string name;
  PipelineResult result;
  std::string error;   // a schedule that cannot be built for these sizes
  std::string detail;  // what a search found
  bool runs() const { return error.empty() && result.completed && !result.out_of_memory; }
};

// Every baseline schedule on every partition (one set for a stage file, which has no layers).
std::vector<Row> baselines(const PipelineArgs& args, const PipelineSource& tuned_source) {
  std::vector<Row> rows;
  const std::vector<std::string> partitions =
      tuned_source.has_layers ? std::vector<std::string>{"uniform", "params", "compute"} : std::vector<std::string>{""};
  for (const std::string& partition : partitions) {
    PipelineArgs variant = args;
    if (!partition.empty()) variant.partition = partition;
    const PipelineSource source = pipeline_source(variant, nullptr);
    for (const std::string& schedule : args.schedules) {
      Row row;
      row.name = partition.empty() ? schedule : schedule + " / " + partition;
      auto built = build_pipeline(schedule, *source.stages, tuned_source.microbatches, tuned_source.microbatches_input);
      if (!built) {
        row.error = built.error().message;
      } else {
        auto r = simulate_pipeline(built.value().scheme, built.value().costs, pipeline_run_info(source, false));
        if (!r) throw CliError(r.error().message);
        row.result = std::move(r).value();
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// "12.3%" above a bound; a time at the bound prints 0.0%, not -0.0% from rounding.
std::string percent_above(double time, double bound) {
  const double percent = 100 * (time / bound - 1);
  return format_fixed(std::abs(percent) < 0.05 ? 0.0 : percent, 1) + "%";
}

void print_rows(const std::vector<Row>& rows, double reference) {
  TextTable t({"scheme", "iteration", "bubble", "peak memory (max)", "overlap", "tokens/s/GPU", "MFU", "vs 1f1b/uniform",
               "status"});
  for (const Row& row : rows) {
    const PipelineResult& r = row.result;
    double peak = 0;
    for (double m : r.peak_memory) peak = std::max(peak, m);
    if (!row.error.empty()) {
      t.add({row.name, "-", "-", "-", "-", "-", "-", "-", "n/a"});
    } else if (!r.completed) {
      t.add({row.name, "-", "-", "-", "-", "-", "-", "-", "DEADLOCK"});
    } else if (r.out_of_memory) {
      t.add({row.name, "-", "-", format_bytes(peak), "-", "-", "-", "-", "OUT OF MEMORY"});
    } else {
      t.add({row.name, format_time(r.iteration_time, "s"), format_fixed(100 * r.bubble_ratio, 1) + "%", format_bytes(peak),
             format_fixed(100 * r.overlap_ratio, 1) + "%",
             r.tokens_per_second_per_gpu > 0 ? format_fixed(r.tokens_per_second_per_gpu, 0) : "-",
             r.mfu > 0 ? format_fixed(100 * r.mfu, 1) + "%" : "-",
             reference > 0 ? format_fixed(reference / r.iteration_time, 3) + "x" : "-", "ok"});
    }
  }
  t.print(std::cout);
}

// A search result as a row, simulated in full.
Row search_row(const std::string& name, const CandidateEvaluator& evaluator, const Result<PipelineSearchResult>& found,
               const PipelineArgs& args, const PipelineSource& source) {
  Row row;
  row.name = name;
  if (!found) {
    row.error = found.error().message;
    return row;
  }
  row.detail = describe_candidate(found.value().best, evaluator.source().devices());
  auto built = evaluator.build(found.value().best);
  if (!built) throw CliError(built.error().message);
  auto r = simulate_pipeline(built.value().first, built.value().second, pipeline_run_info(source, false));
  if (!r) throw CliError(r.error().message);
  row.result = std::move(r).value();
  return row;
}

// Random search and annealing with as many evaluations as the tuner took.
void append_search_baselines(const PipelineTuneArgs& targs, const PipelineSource& source, const TunedRun& tuned,
                             std::vector<Row>& rows) {
  const LinkModel links = source.links;
  const std::string evals = " (" + std::to_string(tuned.evaluations) + " evaluations)";
  CandidateEvaluator random(*source.stages, source.microbatches, links);
  rows.push_back(search_row("random search" + evals, random,
                            random_search(random, tuned.evaluations, targs.max_chunks, targs.seed), targs.pipeline, source));
  CandidateEvaluator annealing(*source.stages, source.microbatches, links);
  rows.push_back(search_row("annealing" + evals, annealing,
                            anneal(annealing, tuned.start, tuned.evaluations, targs.max_chunks, targs.seed),
                            targs.pipeline, source));
}

// The exact optimum below the tuner's time (branch and bound within `seconds`; small problems),
// as a row.
nlohmann::json run_exact(const PipelineTuneArgs& targs, double seconds, const PipelineSource& source, const TunedRun& tuned,
                         const PipelineResult& tuned_run, std::vector<Row>& rows) {
  ExactPipelineOptions options;
  options.max_chunks = targs.max_chunks;
  options.time_limit_seconds = seconds;
  const bool tuned_fits = tuned_run.completed && !tuned_run.out_of_memory;
  if (tuned_fits && !targs.exact_cold) options.upper_bound = tuned_run.iteration_time;
  auto exact = exact_pipeline(*source.stages, source.microbatches, options, source.links);
  if (!exact) throw CliError(exact.error().message);
  const ExactPipelineResult& e = exact.value();
  // Nothing found below the tuner's time in a finished search: the tuner's time is the optimum.
  const double optimum = e.found ? e.iteration_time : tuned_fits && e.finished ? tuned_run.iteration_time : 0;
  Row row;
  row.name = std::string("exact (") + (e.finished ? "optimum" : "unfinished: best found") + ")";
  if (e.found) {
    auto costs = source.stages->costs_of(e.scheme, "exact scheme");
    if (!costs) throw CliError(costs.error().message);
    auto r = simulate_pipeline(e.scheme, costs.value(), pipeline_run_info(source, false));
    if (!r) throw CliError(r.error().message);
    row.result = std::move(r).value();
  } else if (tuned_fits) {
    row.result = tuned_run;  // the tuner's own scheme is the best known
    row.detail = e.finished ? "none faster than the tuned scheme" : "none found within the limit";
  } else {
    row.error = e.finished ? "no scheme fits in memory" : "none found within the limit";
    row.detail = row.error;
  }
  rows.push_back(std::move(row));
  const double tuner_seconds = tuned.seconds;
  nlohmann::json partition = nlohmann::json::array();
  for (auto [first, end] : e.scheme.partition) partition.push_back({first, end});
  return {{"finished", e.finished}, {"found_faster", e.found}, {"optimum", optimum}, {"seconds", e.seconds},
          {"placement", e.scheme.placement}, {"partition", partition}, {"recompute", e.scheme.recompute},
          {"cold", targs.exact_cold},
          {"nodes", e.nodes}, {"tuner_seconds", tuner_seconds},
          // below 1e-9: the same time (the search finds what ties the bound within its tolerance)
          {"tuner_above_optimum", optimum > 0 && tuned_fits ? std::max(0.0, tuned_run.iteration_time / optimum - 1 - 1e-9) : 0.0}};
}

JobSpec pipeline_job_spec(const PipelineTuneArgs& targs, const PipelineProblemSpec& problem, const PipelineSource& source,
                          double budget) {
  JobSpec spec;
  spec.kind = "pipeline";
  spec.problem.pipeline_json = pipeline_problem_json(problem);
  spec.problem.graph_label = source.problem_label;
  spec.budget_seconds = budget;
  spec.budget_evaluations = targs.max_evaluations;
  spec.seed = targs.seed;
  spec.priority = targs.priority;
  spec.pipeline.max_chunks = targs.max_chunks;
  spec.pipeline.min_gain = targs.min_gain;
  spec.pipeline.walk_share = targs.walk_share;
  spec.pipeline.kick_share = targs.kick_share;
  return spec;
}

void print_progress_header() {
  std::cout << "tuning (each phase's end: the best so far; \"phase...\": a long phase goes on, about every 10 s)\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-12s %4s %12s %8s %12s %11s %8s\n", "phase", "pass", "iteration", "bubble",
                "peak memory", "evaluations", "time");
  std::cout << line;
}

void print_progress(const PipelineTuneProgress& p) {
  char row[160];
  const std::string phase = p.running ? p.phase + "..." : p.phase;  // a heartbeat: the phase goes on
  std::snprintf(row, sizeof row, "  %-12s %4d %12s %7.1f%% %12s %11lld %7.1fs\n", phase.c_str(), p.pass,
                format_time(p.iteration_time, "s").c_str(), 100 * p.bubble_ratio, format_bytes(p.peak_memory).c_str(),
                static_cast<long long>(p.evaluations), p.seconds);
  std::cout << row << std::flush;
}

// The job on an embedded cluster (a coordinator and a worker with --rollouts slots in this process).
TunedRun run_embedded(const PipelineTuneArgs& targs, const JobSpec& spec, bool text) {
  const std::unique_ptr<TempFolder> scratch = no_store_folder(targs.no_store, "gantry-pipeline");
  auto opened = Store::open(scratch ? scratch->path() : targs.data);
  if (!opened) throw CliError(opened.error().message);
  std::optional<PipelineJobReport> report;
  EmbeddedJobOptions options;
  options.rollouts = targs.rollouts > 0 ? targs.rollouts : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  options.cancel = &StopSignals::requested();
  if (text) options.hooks.on_pipeline_progress = print_progress;
  options.hooks.on_pipeline_tuned = [&](const PipelineJobReport& r) { report = r; };
  Result<TuneOutcome> outcome = make_error("not run");
  {
    // Ctrl-C, SIGTERM or SIGHUP end the tuning with its best so far, which is still stored.
    StopSignals signals;
    outcome = run_embedded_job(std::move(opened).value(), spec, options);
  }
  if (!outcome) throw CliError(outcome.error().message);
  if (!report) throw CliError("pipeline job " + outcome.value().job_id + " " + to_string(outcome.value().state) + ": " +
                              outcome.value().stop_reason);
  const PipelineTuneResult& t = report->tuned;
  TunedRun run;
  run.best = t.best;
  run.start = t.start;
  run.evaluations = t.evaluations;
  run.passes = t.passes;
  run.budget_ended = t.budget_ended;
  run.stopped = t.stopped;
  run.stored = report->stored && !scratch;
  run.resumed = report->resumed;
  run.resumed_time = report->resumed_time;
  run.seconds = t.history.empty() ? 0 : t.history.back().seconds;
  run.job_id = outcome.value().job_id;
  run.failure = !t.failure.empty()              ? t.failure
                : !report->store_error.empty() ? "the scheme was not stored: " + report->store_error
                                               : "";
  return run;
}

// The job on a coordinator, its moves on the cluster's workers; the tuned scheme is read back
// from the coordinator's store.
TunedRun run_remote(const PipelineTuneArgs& targs, const JobSpec& spec, const PipelineSource& source,
                    const std::vector<PipelineCandidate>& starts) {
  if (targs.no_store || targs.rollouts > 0)
    throw CliError("--no-store and --rollouts are for a run in this process; with --coordinator the coordinator's store "
                   "keeps the scheme and its workers evaluate the moves");
  const JobRecord job = follow_remote_job(spec, targs.remote);
  std::cerr << "job " << job.id << " " << to_string(job.state) << ": " << job.message << "\n";
  // A failed job may still have stored its best so far: shown with the failure, as in the process.
  auto best = remote_schedules(targs.remote)->best(source.problem, source.runtime);
  if (!best || !best->is_pipeline()) {
    if (job.state == JobState::failed) throw CliExit{1, "job " + job.id + " FAILED: " + job.message};
    throw CliError("job " + job.id + " ended " + to_string(job.state) + " but the coordinator has no stored scheme for it");
  }
  auto candidate = candidate_from_json(best->candidate, "the coordinator's stored best");
  if (!candidate) throw CliError(candidate.error().message);
  TunedRun run;
  run.best = std::move(candidate).value();
  // The tuner's start: the best of the same starts, evaluated here.
  CandidateEvaluator evaluator(*source.stages, source.microbatches, source.links);
  CandidateResult start_result;
  for (const PipelineCandidate& c : starts) {
    auto r = evaluator.evaluate(c);
    if (r && (run.start.placement.empty() || r.value().better_than(start_result))) {
      run.start = c;
      start_result = r.value();
    }
  }
  run.evaluations = job.evaluations;
  run.stopped = job.state == JobState::cancelled;
  run.budget_ended = job.message.find("ended by the budget") != std::string::npos;
  if (job.state == JobState::failed) run.failure = job.message;
  run.stored = best->job_id == job.id;
  run.seconds = job.finished > job.started ? job.finished - job.started : 0;
  run.job_id = job.id;
  return run;
}

// Budget and problem: what a job of these flags is (a job file's keys are the same flags).
struct PreparedJob {
  PipelineProblemSpec problem;
  PipelineSource source;
  JobSpec spec;
};

PreparedJob prepare_job(const PipelineTuneArgs& targs) {
  check_flags(targs.pipeline);
  double budget = 0;
  if (!targs.budget.empty()) {
    auto parsed = parse_duration(targs.budget);
    if (!parsed) throw CliError("--budget '" + targs.budget + "': " + parsed.error().message);
    budget = parsed.value();
  }
  PipelineArgs compute = targs.pipeline;  // the tuner's own source: compute-balanced partitions
  compute.partition = "compute";
  PreparedJob job;
  job.problem = pipeline_problem(compute);
  job.source = pipeline_source(compute, nullptr);
  job.spec = pipeline_job_spec(targs, job.problem, job.source, budget);
  return job;
}

void run_tune(const PipelineTuneArgs& targs) {
  const PipelineArgs& args = targs.pipeline;
  double exact_seconds = 0;
  if (!targs.exact.empty()) {
    auto limit = parse_duration(targs.exact);
    if (!limit) throw CliError("--exact '" + targs.exact + "': " + limit.error().message);
    exact_seconds = limit.value();
    if (!args.stages_file.empty())
      throw CliError("--exact needs a model (--model or --hf-config): the per-stage costs of --stages have no layers "
                     "to partition");
  }
  check_output_path("--save-scheme", args.save_scheme);  // before tuning, not after it
  check_output_path("--trace", args.out.trace);
  check_output_path("--svg", args.out.svg);
  const PreparedJob job = prepare_job(targs);
  const PipelineProblemSpec& problem = job.problem;
  const PipelineSource& source = job.source;
  const JobSpec& spec = job.spec;
  if (Status fits = check_static_memory_fits(source); !fits) throw CliError("pipeline tune: " + fits.error().message);
  auto starts = pipeline_tuning_starts(problem);
  if (!starts) throw CliError(starts.error().message);
  const int devices = source.stages->devices();
  if (starts.value().empty())
    throw CliError("pipeline tune: no layout fits the model's layers on " + std::to_string(devices) + " devices");
  const bool text = !args.out.json();
  const bool remote = !targs.remote.endpoint.empty();
  if (targs.detach) {
    if (!remote) throw CliError("--detach needs --coordinator: a job in this process ends with it");
    return submit_job_spec(spec, targs.remote, /*wait=*/false, !text);
  }
  if (text) std::cout << source.description << ", " << source.microbatches << " microbatches\n\n";

  const std::vector<Row> rows = baselines(args, source);
  double reference = 0, best_baseline = std::numeric_limits<double>::infinity();
  std::string best_baseline_name;
  bool reference_fits = true;
  for (const Row& row : rows) {
    // 1F1B on a uniform partition is the reference even when it does not fit: its time as if it did.
    if ((row.name == "1f1b / uniform" || row.name == "1f1b") && row.error.empty() && row.result.completed) {
      reference = row.result.iteration_time;
      reference_fits = !row.result.out_of_memory;
    }
    if (!row.runs()) continue;
    if (row.result.iteration_time < best_baseline) {
      best_baseline = row.result.iteration_time;
      best_baseline_name = row.name;
    }
  }

  if (text && !remote) print_progress_header();  // a coordinator's job reports on stderr
  const TunedRun t = remote ? run_remote(targs, spec, source, starts.value()) : run_embedded(targs, spec, text);
  if (text && t.resumed) std::cout << "  (resumed from the stored best: " << format_time(t.resumed_time, "s") << ")\n";

  CandidateEvaluator evaluator(*source.stages, source.microbatches, source.links);
  auto built = evaluator.build(t.best);
  if (!built) throw CliError(built.error().message);
  const auto& [scheme, costs] = built.value();
  auto final_run = simulate_pipeline(scheme, costs, pipeline_run_info(source, args.out.wants_timeline()));
  if (!final_run) throw CliError(final_run.error().message);
  const PipelineResult& r = final_run.value();
  const BlockingCheck blocking = check_blocking_order(scheme), batched = check_blocking_order(scheme, true);
  // The program an executor runs with blocking calls: transfers in the timeline's order.
  BlockingCheck timeline{false, "the scheme does not run"};
  if (auto timed = evaluator.evaluate(t.best, /*with_starts=*/true); timed && timed.value().evaluation.completed)
    timeline = check_timeline_program(scheme, task_end_times(scheme, costs, timed.value().evaluation.start));
  const bool fits = r.completed && !r.out_of_memory;
  auto bound = pipeline_work_bound(source);
  if (!bound) throw CliError(bound.error().message);
  const double lower_bound = bound.value();
  auto layer_bound = pipeline_layer_bound(source);
  if (!layer_bound) throw CliError(layer_bound.error().message);
  // The searches hold at most --max-chunks stages per device; the tuned scheme may hold more (a
  // V start has 2, a stored best came from another run), and the bound must hold for it.
  const std::vector<int> tuned_stages = stages_per_device(t.best, devices);
  const int bound_stages = std::max(targs.max_chunks, *std::max_element(tuned_stages.begin(), tuned_stages.end()));
  auto chunk_bound = pipeline_layer_bound(source, bound_stages);
  if (!chunk_bound) throw CliError(chunk_bound.error().message);
  std::vector<Row> searched;
  nlohmann::json exact_json;
  if (!t.stopped) {  // a stop request skips the comparisons
    if (targs.search_baselines) append_search_baselines(targs, source, t, searched);
    if (!targs.exact.empty()) exact_json = run_exact(targs, exact_seconds, source, t, r, searched);
  }

  if (!args.save_scheme.empty()) {
    auto written = write_text_file(args.save_scheme, scheme_to_json(scheme));
    if (!written) throw CliError(written.error().message);
  }
  write_pipeline_timeline(args.out,
                          "pipeline tune: " + source.description + ", " + std::to_string(source.microbatches) + " microbatches",
                          r);
  if (!text) {
    nlohmann::json j = {{"tuned",
                         {{"iteration_time", r.iteration_time}, {"bubble_ratio", r.bubble_ratio},
                          {"peak_memory", r.peak_memory}, {"overlap_ratio", r.overlap_ratio},
                          {"tokens_per_second_per_gpu", r.tokens_per_second_per_gpu}, {"mfu", r.mfu},
                          {"completed", r.completed}, {"out_of_memory", r.out_of_memory},
                          {"blocking_progresses", blocking.progresses},
                          {"blocking_batched_progresses", batched.progresses},
                          {"blocking_timeline_progresses", timeline.progresses}, {"scheme", describe_candidate(t.best, devices)}}},
                        {"lower_bound", lower_bound}, {"layer_bound", layer_bound.value()},
                        {"stage_limited_layer_bound", chunk_bound.value()}, {"stage_limit", bound_stages},
                        {"reference_1f1b_uniform", reference},
                        {"reference_fits", reference_fits}, {"evaluations", t.evaluations}, {"passes", t.passes},
                        {"budget_ended", t.budget_ended}, {"stopped", t.stopped}, {"stored", t.stored},
                        {"seconds", t.seconds}, {"job", t.job_id}, {"baselines", nlohmann::json::array()}};
    if (!t.failure.empty()) j["failure"] = t.failure;
    if (!exact_json.is_null()) j["exact"] = exact_json;
    for (const std::vector<Row>* list : std::initializer_list<const std::vector<Row>*>{&rows, &searched})
      for (const Row& row : *list)
      j["baselines"].push_back({{"scheme", row.name}, {"runs", row.runs()},
                                {"iteration_time", row.runs() ? row.result.iteration_time : 0.0},
                                {"bubble_ratio", row.runs() ? row.result.bubble_ratio : 0.0},
                                {"overlap_ratio", row.runs() ? row.result.overlap_ratio : 0.0},
                                {"out_of_memory", row.result.out_of_memory},
                                {"error", row.error.empty() ? row.result.error : row.error}});
    std::cout << j.dump(2) << "\n";
    if (!t.failure.empty()) throw CliExit{1, ""};
    if (t.stopped) throw CliExit{kExitCancelled, ""};
    if (!fits) throw CliExit{1, ""};
    return;
  }
  std::vector<Row> all = rows;
  all.insert(all.end(), searched.begin(), searched.end());
  all.push_back(Row{"tuned", r, "", ""});
  std::cout << "\n";
  print_rows(all, reference);
  for (const Row& row : searched)
    if (!row.detail.empty()) std::cout << "\n" << row.name << ": " << row.detail;
  std::cout << "\ntuned: " << describe_candidate(t.best, devices) << "\n";
  std::cout << "  " << t.evaluations << " evaluations"
            << (t.passes >= 0 ? ", " + std::to_string(t.passes) + " passes" : std::string())
            << (t.budget_ended ? ", ended by the budget" : t.stopped ? ", stopped early" : "") << " (job "
            << t.job_id << ")\n";
  if (!exact_json.is_null() && exact_json["optimum"].get<double>() <= 0)
    std::cout << "  exact search: " << (exact_json["finished"].get<bool>() ? "finished" : "UNFINISHED") << " in "
              << format_fixed(exact_json["seconds"].get<double>(), 2) << " s (" << exact_json["nodes"].get<long long>()
              << " nodes): " << (exact_json["finished"].get<bool>() ? "no scheme fits in memory" : "none found") << "\n";
  else if (!exact_json.is_null())
    std::cout << "  exact search: " << (exact_json["finished"].get<bool>() ? "finished" : "UNFINISHED") << " in "
              << format_fixed(exact_json["seconds"].get<double>(), 2) << " s (" << exact_json["nodes"].get<long long>()
              << " nodes; the tuner took " << format_fixed(exact_json["tuner_seconds"].get<double>(), 3)
              << " s), tuned is " << format_fixed(100 * exact_json["tuner_above_optimum"].get<double>(), 2)
              << "% above the " << (exact_json["finished"].get<bool>() ? "optimum" : "best found") << "\n";
  if (!reference_fits)
    std::cout << "  1f1b / uniform does not fit in memory; the 'vs' column uses its time as if it did: "
              << format_time(reference, "s") << "\n";
  if (fits && r.iteration_time <= 0) {
    std::cout << "  the scheme takes no time: every cost is zero\n";
  } else if (fits) {
    std::cout << (source.has_layers ? "  lower bound (work / devices; by speed on mixed devices): "
                                    : "  lower bound (the busiest device's work, which the stage costs fix): ")
              << format_time(lower_bound, "s") << ", tuned is "
              << percent_above(r.iteration_time, lower_bound) << " above it\n";
    if (layer_bound.value() > lower_bound * (1 + 1e-9))
      std::cout << "  bound with whole layers per device: " << format_time(layer_bound.value(), "s") << ", tuned is "
                << percent_above(r.iteration_time, layer_bound.value()) << " above it\n";
    if (chunk_bound.value() > std::max(lower_bound, layer_bound.value()) * (1 + 1e-9))
      std::cout << "  the same with at most " << bound_stages << (bound_stages == 1 ? " stage" : " stages")
                << " per device (--max-chunks, or the tuned scheme's count when larger): "
                << format_time(chunk_bound.value(), "s") << ", tuned is "
                << percent_above(r.iteration_time, chunk_bound.value()) << " above it\n";
    if (best_baseline < std::numeric_limits<double>::infinity())
      std::cout << "  vs the best baseline (" << best_baseline_name << "): "
                << format_fixed(best_baseline / r.iteration_time, 3) << "x\n";
  } else {
    std::cout << "  no scheme found that " << (r.completed ? "fits in memory" : "runs") << "\n";
  }
  std::cout << "  with blocking send/recv: " << (blocking.progresses ? "progresses" : "DEADLOCK, " + blocking.cycle)
            << "; batched per step: " << (batched.progresses ? "progresses" : "DEADLOCK, " + batched.cycle)
            << "; in the timeline's order: " << (timeline.progresses ? "progresses" : "DEADLOCK, " + timeline.cycle) << "\n";
  if (fits && !targs.no_store) {
    const std::string where = remote ? "the coordinator's store" : "store " + targs.data;
    std::cout << "  " << where << ": "
              << (t.stored ? "stored as the best (query it with `gantry query best` and the same flags)"
                           : "its stored best is at least as fast")
              << "\n";
  }
  if (!t.failure.empty()) throw CliExit{1, "pipeline tune: " + t.failure + "; the best before it is above"};
  if (t.stopped) throw CliExit{kExitCancelled, "pipeline tune stopped early; its best so far is above"};
  // A script must not read "nothing fits" as a tuned scheme.
  if (!fits) throw CliExit{1, "pipeline tune: no scheme found that " + std::string(r.completed ? "fits in memory" : "runs")};
}

}  // namespace

namespace {

// The flags a job carries (the problem, the budget, the search); the others are the command's.
void add_job_options(CLI::App& cmd, PipelineTuneArgs& args) {
  add_pipeline_options(cmd, args.pipeline);
  cmd.remove_option(cmd.get_option("--partition"));  // the tuner starts from every partition
  cmd.add_option("--budget", args.budget, "time limit, e.g. 30s (default: until a pass gains under --min-gain)");
  cmd.add_option("--max-evaluations", args.max_evaluations, "evaluation limit (0: none)")->check(CLI::Validator(
          [](std::string& text) {
            return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos ? std::string()
                                                                                            : "'" + text + "' is not a count from 0";
          },
          "COUNT"));
  cmd.add_option("--max-chunks", args.max_chunks, "virtual stages per device the placement phase tries")
      ->capture_default_str()
      ->check(whole_in(1, 16));
  cmd.add_option("--min-gain", args.min_gain, "a pass gaining less than this share ends the tuning")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--kick-share", args.kick_share,
                 "after the descents, kicks (random boundary shifts, device swaps, stage splits or merges, rules and depths, "
                 "then descents again) from each layout's best "
                 "for this share of their evaluations (0: none; they find schemes a few moves from the descents' ends)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  cmd.add_option("--walk-share", args.walk_share,
                 "an annealing walk from the best start, within its layout, for this share of the descents' and kicks' "
                 "evaluations, run beside the kicks (after them with --max-evaluations) (0: none; it finds other basins on "
                 "memory-bound models and, at 1, doubles the evaluations)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  add_priority_option(cmd, args.priority);
}

}  // namespace

JobSpec pipeline_job_from_file(const JobFile& file) {
  CLI::App parser("pipeline job file");
  PipelineTuneArgs args;
  add_job_options(parser, args);
  std::vector<std::string> argv;  // CLI11 parses a reversed vector
  for (const auto& [key, value] : file.settings) {
    if (key == "kind") continue;
    if (!parser.get_option_no_throw("--" + key))
      throw CliError(file.path + ": unknown key \"" + key + "\" (a pipeline job's keys are `gantry pipeline tune`'s "
                     "flag names for the problem, budget and search)");
    const bool path = key == "hf-config" || key == "stages" || key == "profile" || (key == "cluster" && names_cluster_file(value));
    argv.push_back("--" + key);
    argv.push_back(path ? path_from_job_file(file.path, value) : value);
  }
  std::reverse(argv.begin(), argv.end());
  try {
    parser.parse(argv);
  } catch (const CLI::ParseError& e) {
    throw CliError(file.path + ": " + e.what());
  }
  note_given(parser, args.pipeline);
  try {  // the values as their flags' checks see them, before anything is sent
    return prepare_job(args).spec;
  } catch (const CliError& e) {
    throw CliError(file.path + ": " + e.what() + " (a pipeline job's keys are `gantry pipeline tune`'s flag names)");
  }
}

void add_pipeline_tune_command(CLI::App& pipeline) {
  auto args = std::make_shared<PipelineTuneArgs>();
  CLI::App* cmd = pipeline.add_subcommand(
      "tune", "co-tune partition, placement and schedule (bubble-aware), against every baseline schedule x partition");
  add_job_options(*cmd, *args);
  cmd->add_flag("--search-baselines", args->search_baselines,
               "also run random search and simulated annealing with as many evaluations as the tuner took");
  cmd->add_option("--seed", args->seed, "seed of the tuner's kicks and walk and of the search baselines")->capture_default_str()->check(seed_number());
  args->data = default_data_dir();
  cmd->add_option("--data", args->data, "data directory: the best scheme is stored there and a second run resumes "
                                        "from it (default: $GANTRY_DATA or ./gantry-data)");
  cmd->add_flag("--no-store", args->no_store, "neither read nor write the store");
  cmd->add_flag("--exact-cold", args->exact_cold,
                "with --exact: search without the tuner's time as the first bound (how long the exact search takes "
                "alone)");
  cmd->add_option("--exact", args->exact,
                  "also find the exact optimum by branch and bound within this time, e.g. 60s (small problems: every "
                  "partition, stage-to-device map up to --max-chunks per device and per-device order; where memory "
                  "binds, every set of devices that recompute; not offload)");
  cmd->add_option("--schedules", args->pipeline.schedules, "baselines to compare (a comma list)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--save-scheme", args->pipeline.save_scheme, "write the tuned scheme as JSON (simulate it with --scheme)")->check(file_path());
  cmd->add_option("--rollouts", args->rollouts,
                  "worker slots that evaluate the tuner's moves in parallel (default: hardware threads)")
      ->check(whole_in(1, 256));
  args->remote.add_to(*cmd, "run the job on this coordinator (tcp://HOST:PORT), its moves on the cluster's workers, and "
                            "follow it; the scheme is stored there");
  cmd->add_flag("--detach", args->detach,
                "with --coordinator: submit the job, print its id and return (follow it with `gantry jobs`, read the "
                "scheme with `gantry query best` and the same flags)");
  args->pipeline.out.add_to(*cmd);
  cmd->footer("The tuning runs as a pipeline job: here on an embedded cluster (a coordinator and a worker with "
              "--rollouts slots), or on a coordinator with --coordinator (or `gantry submit` of a job file with kind: "
              "pipeline and these flags as keys); each step's moves are evaluated in parallel on the workers. Ctrl-C, "
              "SIGTERM and SIGHUP end the tuning early: its best so far is printed and stored, and gantry exits with "
              "status 130.");
  cmd->get_option("--coordinator")->excludes("--data");
  cmd->callback([cmd, args] {
    note_given(*cmd, args->pipeline);
    run_tune(*args);
  });
}

}  // namespace gantry::cli
