// gantry tune: a tuning job. Rollout actors search in parallel, the tuner keeps the best, and the
// store keeps everything, so `gantry query` answers later from any process.
#include <algorithm>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "actors/tune_job.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/job_args.hpp"
#include "cli/stop_signals.hpp"
#include "cli/train_job.hpp"
#include "cli/result_table.hpp"
#include "core/graph_io.hpp"
#include "sim/simulator.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

std::string progress_bar(double fraction) {
  const int width = 24, filled = static_cast<int>(fraction * width + 0.5);
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

// A job that did not complete ends the process with its own status, after its best was printed.
void end_of_job(const TuneOutcome& t, const TuneOptions& options) {
  std::cout.flush();
  std::fflush(stdout);
  if (t.state == JobState::cancelled)
    throw CliExit{kExitCancelled, "job " + t.job_id + " cancelled; its best so far is stored in " + options.data_dir};
  if (t.state == JobState::failed) throw CliExit{1, "job " + t.job_id + " FAILED: " + t.stop_reason};
}

// `--method doppler`: DOPPLER's stages I then II within the budget, as `gantry train` runs them (a
// learner job, here or on --coordinator's cluster).
void run_doppler_tune(const TuneArgs& args, const RemoteArgs& remote) {
  if (args.evals > 0) throw CliError("tune --method doppler takes a time budget (--budget), not --evals");
  TrainArgs t;
  if (!args.problem.graph_file.empty()) t.graphs.push_back(args.problem.graph_file);
  if (!args.problem.workload.empty()) t.workloads.push_back(args.problem.workload);
  t.clusters = {args.problem.cluster};
  t.seed = args.problem.seed;
  t.sim = args.sim;
  t.profiled = args.profiled;
  t.budget = args.budget;
  t.priority = args.priority;
  if (args.rollouts > 0) t.threads = args.rollouts;  // the embedded worker's slots, as for search
  // With executors attached (a coordinator's workers with --devices, or --devices here), stage III
  // follows on measured makespans; the learner skips it when none offers the cluster's devices.
  if (!args.devices.empty() && !remote.endpoint.empty())
    throw CliError("--devices is for a run in this process; a coordinator's workers offer their own (gantry worker --devices)");
  t.devices = parse_executor_devices(args.devices, args.gantry_exec);
  if (t.devices.count > 0) {  // stage III needs the measure kind of the cluster, as the pool leases it
    auto cluster = Cluster::load(args.problem.cluster);
    const std::vector<std::string> offered = measure_kinds(t.devices);
    if (cluster && std::find(offered.begin(), offered.end(), measure_kind(cluster.value())) == offered.end())
      throw CliError("--devices " + args.devices + ": the cluster " + cluster.value().name() + " is measured by " +
                     measure_kind(cluster.value()) + " tasks (" + std::to_string(cluster.value().size()) + " " +
                     measure_backend(cluster.value()) + " devices)");
  }
  t.stage = !remote.endpoint.empty() || t.devices.count > 0 ? "il+sim+real" : "il+sim";
  t.imitate = "pick";
  t.data = args.data.empty() ? default_data_dir() : args.data;
  run_train(t, remote);
}

void run_tune(TuneArgs& args, const RemoteArgs& remote) {
  if (!args.devices.empty() && args.method != "doppler")
    throw CliError("--devices " + args.devices + ": executors serve only --method doppler's stage III");
  refuse_gantry_exec_remote(args.gantry_exec, !remote.endpoint.empty());
  if (!args.gantry_exec.empty() && args.devices.empty())
    throw CliError("--gantry-exec " + args.gantry_exec + " needs --devices (the devices it measures on, for --method doppler)");
  if (args.method == "doppler") return run_doppler_tune(args, remote);
  if (!remote.endpoint.empty()) return submit_job(args, remote, true);
  Problem problem = load_problem(args.problem);
  TuneOptions options = tune_options(args);
  options.cancel = &StopSignals::requested();
  ProfileTable profiles;
  if (args.profiled) {  // read before the job opens the store as its writer
    profiles = load_profiles(options.data_dir);
    use_profiles(problem, profiles);
  }

  const std::string& unit = problem.graph.cost_unit();
  const bool bar = isatty(STDERR_FILENO);
  std::ostream& lines = args.out.json() ? std::cerr : std::cout;
  bool bar_shown = false;
  options.on_progress = [&](const TuneProgress& p) {
    if (bar_shown) std::fprintf(stderr, "\r\033[K");
    bar_shown = false;
    if (p.kind == TuneProgress::Kind::improvement) {
      char line[160];
      std::snprintf(line, sizeof line, "%8.2fs %11ld evals  makespan %-14s %s", p.elapsed, p.evaluations,
                    format_time(p.best_makespan, unit).c_str(), p.method.c_str());
      if (bar) std::fflush(stderr);
      lines << line << std::endl;
    }
    if (bar) {
      std::fprintf(stderr, "%s %3.0f%%  %.1fs  %ld evals  best %s", progress_bar(p.fraction).c_str(), 100 * p.fraction,
                   p.elapsed, p.evaluations, format_time(p.best_makespan, unit).c_str());
      std::fflush(stderr);
      bar_shown = true;
    }
  };

  TuneProblem tune_problem{problem.graph, problem.cluster, *problem.costs, args.sim.options(),
                           problem.graph_label, graph_to_json(problem.graph, -1), args.profiled ? &profiles : nullptr};
  std::fprintf(stderr, "tuning %s on %s: %s, store %s (Ctrl-C stops and keeps the best)\n", problem.graph_label.c_str(),
               problem.cluster.name().c_str(),
               options.budget_seconds > 0 ? ("budget " + args.budget).c_str() : ("budget " + std::to_string(args.evals) + " evals").c_str(),
               options.data_dir.c_str());
  Result<TuneOutcome> outcome = make_error("not run");
  {
    StopSignals signals;
    outcome = run_tune_job(tune_problem, options);
  }
  if (bar_shown) std::fprintf(stderr, "\r\033[K");
  if (!outcome) throw CliError(outcome.error().message);
  const TuneOutcome& t = outcome.value();

  SimOptions full = args.sim.options();
  full.record = true;
  Simulator sim(problem.graph, *problem.costs, problem.cluster, full);
  MethodRow row{t.best, sim.run(t.best.placement)};
  row.outcome.evaluations = t.evaluations;
  row.outcome.seconds = t.seconds;
  const double bound = makespan_lower_bound(problem.graph, *problem.costs, problem.cluster, args.sim.options());
  if (args.out.wants_timeline())
    write_timelines(args.out, problem, row.result, problem.graph_label + " on " + problem.cluster.name() + " - tuned");
  if (args.out.json()) {
    nlohmann::json j = method_json(problem, row, bound);
    j["job"] = t.job_id;
    j["state"] = to_string(t.state);
    j["best_heuristic"] = t.best_heuristic;
    j["heuristic_makespan"] = t.heuristic_makespan;
    j["resumed"] = t.resumed;
    j["batches"] = t.batches;
    j["data"] = options.data_dir;
    j["graph_fingerprint"] = t.graph.hex();
    j["runtime_fingerprint"] = t.runtime.hex();
    j["stop_reason"] = t.stop_reason;
    j["heuristic_evaluations"] = t.heuristic_evaluations;
    j["heuristic_seconds"] = t.heuristic_seconds;
    j["rollout_seconds"] = t.rollout_seconds;
    std::cout << j.dump(2) << "\n";
    end_of_job(t, options);
    return;
  }
  std::cout << "\n";
  print_methods_table(std::cout, problem, {row}, bound);
  const double gain = t.heuristic_makespan > 0 ? 100 * (1 - t.best.makespan / t.heuristic_makespan) : 0;
  std::printf("\njob %s %s after %.1fs (%s), %ld evaluations (%ld by the heuristics) in %ld batches\n",
              t.job_id.c_str(), to_string(t.state), t.seconds, t.stop_reason.c_str(), t.evaluations,
              t.heuristic_evaluations, t.batches);
  if (options.budget_seconds > 0 && t.seconds > options.budget_seconds + std::max(0.5, 0.05 * options.budget_seconds))
    std::printf("the time budget of %s was exceeded by %.1fs (the heuristics alone took %.1fs)\n", args.budget.c_str(),
                t.seconds - options.budget_seconds, t.heuristic_seconds);
  std::printf("best heuristic %s: %s; tuned: %s (%.1f%% lower)%s\n", t.best_heuristic.c_str(),
              format_time(t.heuristic_makespan, unit).c_str(), format_time(t.best.makespan, unit).c_str(), gain,
              t.resumed ? " - resumed from the stored best" : "");
  if (t.state == JobState::failed)
    std::printf("the best above may not be stored in %s (graph %s, runtime %s)\n", options.data_dir.c_str(),
                t.graph.hex().c_str(), t.runtime.hex().c_str());
  else
    std::printf("stored in %s as graph %s, runtime %s\n(gantry query best --data %s --fingerprint %s:%s)\n",
                options.data_dir.c_str(), t.graph.hex().c_str(), t.runtime.hex().c_str(), options.data_dir.c_str(),
                t.graph.hex().c_str(), t.runtime.hex().c_str());
  end_of_job(t, options);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand("tune", "tune a placement with parallel rollout actors and keep the best in the store");
  cmd->footer("Ctrl-C, SIGTERM and SIGHUP stop the job: it ends CANCELLED, keeps its best and exits with status 130.\n"
              "A job whose rollout or store failed ends FAILED (exit status 1) and prints the best it found.");
  args->problem.add_to(*cmd);
  cmd->add_option("--data", args->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  add_profiled_flag(*cmd, args->profiled);
  auto* budget = cmd->add_option("--budget", args->budget, "time budget (e.g. 30s, 2m)")->capture_default_str();
  cmd->add_option("--method", args->method,
                  "search (heuristics, then annealing on rollout actors) or doppler (learn a policy: imitation, then RL; see gantry train)")
      ->check(CLI::IsMember({"search", "doppler"}))->capture_default_str();
  cmd->add_option("--evals", args->evals, "evaluation budget (candidates evaluated: simulator runs, or list decodes in search's list phase; the heuristics' included; honoured exactly)");
  cmd->add_option("--patience", args->patience, "stop after this long without improvement (e.g. 10s)");
  cmd->add_option("--devices", args->devices,
                  "--method doppler: executor devices of this machine (cpu:N, cuda:N, or :all), so DOPPLER's stage III "
                  "follows on measured makespans (on a --coordinator, its workers' --devices serve instead)");
  add_gantry_exec_option(*cmd, args->gantry_exec, "with --method doppler and --devices (stage III's measurements), not with --coordinator");
  cmd->add_option("--rollouts", args->rollouts,
                  "rollout actors (default: one per core; at most 4 per hardware thread, 256 at most)");
  cmd->add_option("--batch", args->batch, "length of one rollout batch (a lease of the rollout pool; a running batch runs to its end, so it is also how long a cancel may wait), at most 60s and never past the budget")->capture_default_str();
  cmd->add_option("--batch-evals", args->batch_evals, "fixed evaluations per batch instead (reproducible runs)");
  auto remote = std::make_shared<RemoteArgs>();
  remote->add_to(*cmd, "run the job on this coordinator's cluster (tcp://HOST:PORT) and follow it, instead of in this process");
  add_priority_option(*cmd, args->priority);
  cmd->add_option("--parallelism", args->parallelism, "with --coordinator: batches in flight at most (default: every slot)");
  args->sim.add_to(*cmd);
  args->out.add_to(*cmd);
  cmd->callback([cmd, args, budget, remote] {
    args->budget_given = budget->count() > 0;
    // A learner has no search batches or patience: a flag it would ignore is an error, not silence.
    if (args->method == "doppler")
      for (const char* flag : {"--patience", "--batch", "--batch-evals", "--parallelism"})
        if (cmd->get_option(flag)->count() > 0)
          throw CliError(std::string("tune --method doppler: ") + flag +
                         " is a setting of --method search; a learner job takes --budget, --rollouts (its worker's "
                         "slots) and, with gantry train, its own batch settings");
    run_tune(*args, *remote);
  });
}

}  // namespace gantry::cli
