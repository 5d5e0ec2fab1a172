// gantry pipeline tune: the bubble-aware co-tuner of partition, placement and schedule, with every
// baseline schedule x partition side by side.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/duration.hpp"
#include "cli/pipeline_args.hpp"
#include "cli/stop_signals.hpp"
#include "cli/text_table.hpp"
#include "core/json_util.hpp"
#include "core/unix_time.hpp"
#include "sim/blocking_deadlock.hpp"
#include "sim/model_version.hpp"
#include "sim/pipeline_simulation.hpp"
#include "sim/timeline_export.hpp"
#include "tuner/pipeline/exact_pipeline.hpp"
#include "tuner/pipeline/pipeline_random_search.hpp"
#include "tuner/pipeline/pipeline_tuner.hpp"
#include "tuner/pipeline/schedule_registry.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct TuneArgs {
  PipelineArgs pipeline;
  std::string budget;
  std::int64_t max_evaluations = 0;
  int max_chunks = 4;
  double min_gain = 0.001;
  bool search_baselines = false;
  std::uint64_t seed = 1;
  std::string data;  // the store (empty with --no-store)
  bool no_store = false;
  std::string exact;  // --exact TIME_LIMIT: also search the exact optimum (small problems)
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
        auto r = simulate_pipeline(built.value().scheme, built.value().costs, pipeline_run_info(args, source, false));
        if (!r) throw CliError(r.error().message);
        row.result = std::move(r).value();
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
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
  auto r = simulate_pipeline(built.value().first, built.value().second, pipeline_run_info(args, source, false));
  if (!r) throw CliError(r.error().message);
  row.result = std::move(r).value();
  return row;
}

// Random search and annealing with as many evaluations as the tuner took.
void append_search_baselines(const TuneArgs& targs, const PipelineSource& source, const PipelineTuneResult& tuned,
                             std::vector<Row>& rows) {
  const LinkModel links = pipeline_links(targs.pipeline);
  const std::string evals = " (" + std::to_string(tuned.evaluations) + " evaluations)";
  CandidateEvaluator random(*source.stages, source.microbatches, links);
  rows.push_back(search_row("random search" + evals, random,
                            random_search(random, tuned.evaluations, targs.max_chunks, targs.seed), targs.pipeline, source));
  CandidateEvaluator annealing(*source.stages, source.microbatches, links);
  rows.push_back(search_row("annealing" + evals, annealing,
                            anneal(annealing, tuned.start, tuned.evaluations, targs.max_chunks, targs.seed),
                            targs.pipeline, source));
}

// The stored best of this problem on this runtime, as a starting candidate (a second run resumes
// from it); nothing when there is none or it cannot be read.
std::optional<std::pair<PipelineCandidate, double>> stored_start(Store& store, const PipelineSource& source) {
  auto best = store.best(source.problem, source.runtime);
  if (!best) throw CliError(best.error().message);
  if (!best.value() || !best.value()->is_pipeline() || best.value()->model_version != kPipelineModelVersion) return {};
  auto candidate = candidate_from_json(best.value()->candidate, "the stored best in " + store.path());
  if (!candidate) {
    std::cerr << "gantry: " << candidate.error().message << "; starting afresh\n";
    return {};
  }
  return std::pair{std::move(candidate).value(), best.value()->makespan};
}

// Stores the tuned scheme as the problem's best when it beats the stored one; whether it did.
bool store_best(Store& store, const PipelineSource& source, const PipelineTuneResult& tuned, const PipelineScheme& scheme,
                const PipelineResult& r, double lower_bound) {
  ScheduleRecord record;
  record.graph = source.problem;
  record.cluster = source.runtime;
  record.graph_label = "pipeline: " + source.problem_label + ", " + std::to_string(source.microbatches) + " microbatches";
  record.cluster_name = source.cluster_name.empty() ? "(stage costs)" : source.cluster_name;
  record.method = "pipeline-tune";
  record.sim = "pipeline";
  record.unit = "s";
  record.makespan = r.iteration_time;
  record.lower_bound = lower_bound;
  record.found_at = unix_now();
  record.evaluations = tuned.evaluations;
  record.model_version = kPipelineModelVersion;
  record.scheme = scheme_to_json(scheme, -1);
  record.candidate = candidate_to_json(tuned.best);
  auto stored = store.put_if_better(record);
  if (!stored) throw CliError(stored.error().message);
  return stored.value();
}

// The exact optimum below the tuner's time (branch and bound within `seconds`; small problems),
// as a row.
nlohmann::json run_exact(const TuneArgs& targs, double seconds, const PipelineSource& source,
                         const PipelineTuneResult& tuned, const PipelineResult& tuned_run, std::vector<Row>& rows) {
  ExactPipelineOptions options;
  options.max_chunks = targs.max_chunks;
  options.time_limit_seconds = seconds;
  const bool tuned_fits = tuned_run.completed && !tuned_run.out_of_memory;
  if (tuned_fits) options.upper_bound = tuned_run.iteration_time;
  auto exact = exact_pipeline(*source.stages, source.microbatches, options, pipeline_links(targs.pipeline));
  if (!exact) throw CliError(exact.error().message);
  const ExactPipelineResult& e = exact.value();
  // Nothing found below the tuner's time in a finished search: the tuner's time is the optimum.
  const double optimum = e.found ? e.iteration_time : tuned_fits && e.finished ? tuned_run.iteration_time : 0;
  Row row;
  row.name = std::string("exact (") + (e.finished ? "optimum" : "unfinished: best found") + ")";
  if (e.found) {
    auto costs = source.stages->costs_of(e.scheme, "exact scheme");
    if (!costs) throw CliError(costs.error().message);
    auto r = simulate_pipeline(e.scheme, costs.value(), pipeline_run_info(targs.pipeline, source, false));
    if (!r) throw CliError(r.error().message);
    row.result = std::move(r).value();
  } else {
    row.result = tuned_run;  // the tuner's own scheme is the best known
    row.detail = e.finished ? "none faster than the tuned scheme" : "none found within the limit";
  }
  rows.push_back(std::move(row));
  const double tuner_seconds = tuned.history.empty() ? 0 : tuned.history.back().seconds;
  nlohmann::json partition = nlohmann::json::array();
  for (auto [first, end] : e.scheme.partition) partition.push_back({first, end});
  return {{"finished", e.finished}, {"found_faster", e.found}, {"optimum", optimum}, {"seconds", e.seconds},
          {"placement", e.scheme.placement}, {"partition", partition},
          {"nodes", e.nodes}, {"tuner_seconds", tuner_seconds},
          // below 1e-9: the same time (the search finds what ties the bound within its tolerance)
          {"tuner_above_optimum", optimum > 0 && tuned_fits ? std::max(0.0, tuned_run.iteration_time / optimum - 1 - 1e-9) : 0.0}};
}

void run_tune(const TuneArgs& targs) {
  const PipelineArgs& args = targs.pipeline;
  check_flags(args);
  double budget = 0;
  if (!targs.budget.empty()) {
    auto parsed = parse_duration(targs.budget);
    if (!parsed) throw CliError("--budget '" + targs.budget + "': " + parsed.error().message);
    budget = parsed.value();
  }
  double exact_seconds = 0;
  if (!targs.exact.empty()) {
    auto limit = parse_duration(targs.exact);
    if (!limit) throw CliError("--exact '" + targs.exact + "': " + limit.error().message);
    exact_seconds = limit.value();
    if (!args.stages_file.empty())
      throw CliError("--exact needs a model (--model or --hf-config): the per-stage costs of --stages have no layers "
                     "to partition");
  }
  PipelineArgs compute = args;  // the tuner starts from compute-balanced partitions
  compute.partition = "compute";
  const PipelineSource source = pipeline_source(compute, nullptr);
  const int devices = source.stages->devices();
  const LinkModel links = pipeline_links(args);
  const bool text = !args.out.json();
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

  CandidateEvaluator evaluator(*source.stages, source.microbatches, links);
  // The zero-bubble baselines' layouts on every partition: the tuner starts from the best of
  // them, so it never ends behind one.
  std::vector<PipelineCandidate> starts;
  for (const std::string& partition : source.has_layers ? std::vector<std::string>{"compute", "params", "uniform"}
                                                         : std::vector<std::string>{""}) {
    PipelineArgs variant = args;
    if (!partition.empty()) variant.partition = partition;
    const PipelineSource partitioned = pipeline_source(variant, nullptr);
    for (StageLayout layout : {StageLayout{1, false}, StageLayout{2, true}}) {
      auto c = layout_candidate(*partitioned.stages, layout);
      if (c) starts.push_back(std::move(c).value());
    }
  }
  if (starts.empty()) throw CliError("pipeline tune: no layout fits the model's layers on " + std::to_string(devices) + " devices");
  std::unique_ptr<Store> store;
  if (!targs.no_store) {
    auto opened = Store::open(targs.data);
    if (!opened) throw CliError(opened.error().message);
    store = std::move(opened).value();
    if (auto resume = stored_start(*store, source)) {
      if (text) std::cout << "resuming from the stored best: " << format_time(resume->second, "s") << "\n";
      starts.push_back(std::move(resume->first));
    }
  }
  PipelineTuneOptions options;
  options.budget_seconds = budget;
  options.max_evaluations = targs.max_evaluations;
  options.max_chunks = targs.max_chunks;
  options.min_gain = targs.min_gain;
  if (text) {
    std::cout << "tuning (each phase: the best so far)\n";
    char line[160];
    std::snprintf(line, sizeof line, "  %-10s %4s %12s %8s %12s %11s %8s\n", "phase", "pass", "iteration", "bubble",
                  "peak memory", "evaluations", "time");
    std::cout << line;
    options.on_progress = [](const PipelineTuneProgress& p) {
      char row[160];
      std::snprintf(row, sizeof row, "  %-10s %4d %12s %7.1f%% %12s %11lld %7.1fs\n", p.phase.c_str(), p.pass,
                    format_time(p.iteration_time, "s").c_str(), 100 * p.bubble_ratio, format_bytes(p.peak_memory).c_str(),
                    static_cast<long long>(p.evaluations), p.seconds);
      std::cout << row << std::flush;
    };
  }
  // Ctrl-C, SIGTERM or SIGHUP end the tuning with its best so far, which is still stored.
  StopSignals signals;
  options.should_stop = [] { return StopSignals::requested().load(); };
  auto tuned = tune_pipeline(evaluator, starts, options);
  if (!tuned) throw CliError(tuned.error().message);
  const PipelineTuneResult& t = tuned.value();
  auto built = evaluator.build(t.best);
  if (!built) throw CliError(built.error().message);
  const auto& [scheme, costs] = built.value();
  auto final_run = simulate_pipeline(scheme, costs, pipeline_run_info(args, source, args.out.wants_timeline()));
  if (!final_run) throw CliError(final_run.error().message);
  const PipelineResult& r = final_run.value();
  const BlockingCheck blocking = check_blocking_order(scheme);
  const bool fits = r.completed && !r.out_of_memory;
  double work = 0;
  for (int s = 0; s < costs.num_stages(); ++s) work += costs.f[s] + costs.b[s] + costs.w[s];
  const double lower_bound = work * source.microbatches / devices;
  // Stored before the comparisons below, which a second signal could cut short.
  const bool stored = store && fits && store_best(*store, source, t, scheme, r, lower_bound);
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
                          {"blocking_progresses", blocking.progresses}, {"scheme", describe_candidate(t.best, devices)}}},
                        {"lower_bound", lower_bound}, {"reference_1f1b_uniform", reference},
                        {"reference_fits", reference_fits}, {"evaluations", t.evaluations}, {"passes", t.passes},
                        {"budget_ended", t.budget_ended}, {"stopped", t.stopped}, {"stored", stored}, {"seconds", t.history.empty() ? 0.0 : t.history.back().seconds},
                        {"baselines", nlohmann::json::array()}};
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
    if (t.stopped) throw CliExit{kExitCancelled, ""};
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
  std::cout << "  " << t.evaluations << " evaluations, " << t.passes << " passes"
            << (t.budget_ended ? ", ended by the budget" : t.stopped ? ", stopped by a signal" : "") << "\n";
  if (!exact_json.is_null())
    std::cout << "  exact search: " << (exact_json["finished"].get<bool>() ? "finished" : "UNFINISHED") << " in "
              << format_fixed(exact_json["seconds"].get<double>(), 2) << " s (" << exact_json["nodes"].get<long long>()
              << " nodes; the tuner took " << format_fixed(exact_json["tuner_seconds"].get<double>(), 3)
              << " s), tuned is " << format_fixed(100 * exact_json["tuner_above_optimum"].get<double>(), 2)
              << "% above the " << (exact_json["finished"].get<bool>() ? "optimum" : "best found") << "\n";
  if (!reference_fits)
    std::cout << "  1f1b / uniform does not fit in memory; the 'vs' column uses its time as if it did: "
              << format_time(reference, "s") << "\n";
  if (fits) {
    std::cout << "  lower bound (work / devices): " << format_time(lower_bound, "s") << ", tuned is "
              << format_fixed(100 * (r.iteration_time / lower_bound - 1), 1) << "% above it\n";
    if (best_baseline < std::numeric_limits<double>::infinity())
      std::cout << "  vs the best baseline (" << best_baseline_name << "): "
                << format_fixed(best_baseline / r.iteration_time, 3) << "x\n";
  } else {
    std::cout << "  no scheme found that " << (r.completed ? "fits in memory" : "runs") << "\n";
  }
  std::cout << "  with blocking send/recv: " << (blocking.progresses ? "progresses" : "DEADLOCK, " + blocking.cycle) << "\n";
  if (store && fits)
    std::cout << "  store " << store->path() << ": "
              << (stored ? "stored as the best (query it with `gantry query best` and the same flags)"
                         : "its stored best is at least as fast")
              << "\n";
  if (t.stopped) throw CliExit{kExitCancelled, "pipeline tune stopped by a signal; its best so far is above"};
}

}  // namespace

void add_pipeline_tune_command(CLI::App& pipeline) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = pipeline.add_subcommand(
      "tune", "co-tune partition, placement and schedule (bubble-aware), against every baseline schedule x partition");
  add_pipeline_options(*cmd, args->pipeline);
  cmd->remove_option(cmd->get_option("--partition"));  // the tuner starts from every partition
  cmd->add_option("--budget", args->budget, "time limit, e.g. 30s (default: until a pass gains under --min-gain)");
  cmd->add_option("--max-evaluations", args->max_evaluations, "evaluation limit (0: none)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-chunks", args->max_chunks, "virtual stages per device the placement phase tries")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  cmd->add_option("--min-gain", args->min_gain, "a pass gaining less than this share ends the tuning")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--search-baselines", args->search_baselines,
               "also run random search and simulated annealing with as many evaluations as the tuner took");
  cmd->add_option("--seed", args->seed, "seed of the search baselines")->capture_default_str();
  args->data = default_data_dir();
  cmd->add_option("--data", args->data, "data directory: the best scheme is stored there and a second run resumes "
                                        "from it (default: $GANTRY_DATA or ./gantry-data)");
  cmd->add_flag("--no-store", args->no_store, "neither read nor write the store");
  cmd->add_option("--exact", args->exact,
                  "also find the exact optimum by branch and bound within this time, e.g. 60s (small problems: every "
                  "partition, stage-to-device map up to --max-chunks per device and per-device order)");
  cmd->add_option("--schedules", args->pipeline.schedules, "baselines to compare (a comma list)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--save-scheme", args->pipeline.save_scheme, "write the tuned scheme as JSON (simulate it with --scheme)");
  args->pipeline.out.add_to(*cmd);
  cmd->footer("Ctrl-C, SIGTERM and SIGHUP end the tuning early: its best so far is printed and stored, and gantry "
              "exits with status 130.");
  cmd->callback([cmd, args] {
    note_given(*cmd, args->pipeline);
    run_tune(*args);
  });
}

}  // namespace gantry::cli
