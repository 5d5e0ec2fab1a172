// gantry execute: run a placement for real on this machine's CPU cores (the executor's CPU backend,
// one core per device of the cluster) and set the measured makespan beside the simulator's.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "actors/job_spec.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/job_args.hpp"
#include "cli/job_listing.hpp"
#include "cli/schedule_source.hpp"
#include "cli/text_table.hpp"
#include "core/fingerprint.hpp"
#include "core/graph_io.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/external_executor.hpp"
#include "executor/measured_timeline.hpp"
#include "executor/co_run.hpp"
#include "executor/profile_samples.hpp"
#include "storage/store.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"
#include "tuner/placement_method.hpp"

namespace gantry::cli {

namespace {

struct ExecuteArgs {
  ProblemArgs problem;
  SimArgs sim;
  OutputArgs out;
  RemoteArgs remote;
  std::string placement_file, method, data, gantry_exec;
  bool best = false, throttle = false, no_pin = false, profiled = false, no_record = false;
  int repeats = 5, warmup = 1, priority = 0;
};

struct ChosenPlacement {
  Placement placement;
  std::string source;  // for the report: the file, "stored best (method)" or the method
};

// The key of the stored best this run measures: with --profiled, the best of a job tuned with them.
Fingerprint runtime_key(const ExecuteArgs& args, const Problem& problem, const SimOptions& options, Store& store) {
  if (!args.profiled) return runtime_fingerprint(problem.cluster, options);
  const ProfileTable profiles = require_profiles(store);
  return runtime_fingerprint(problem.cluster, options, &profiles);
}

ChosenPlacement choose_placement(const ExecuteArgs& args, const Problem& problem, const SimOptions& options,
                                 Store* store) {
  if (!args.placement_file.empty()) return {read_placement_for(args.placement_file, problem), args.placement_file};
  if (args.best) {
    auto best = store->best(fingerprint(problem.graph), runtime_key(args, problem, options, *store));
    if (!best) throw CliError(best.error().message);
    if (!best.value() || best.value()->is_pipeline()) {
      auto same_graph = store->list_best(fingerprint(problem.graph).hex());
      throw CliError("no stored best in " + store->path() + " for " + problem.graph_label + " on " +
                     problem.cluster.name() + " with these simulator options (`gantry tune` finds one)" +
                     (same_graph ? other_runtimes_note(same_graph.value(), runtime_key(args, problem, options, *store)) : ""));
    }
    return {best.value()->placement, "stored best (" + best.value()->method + ", " + best.value()->job_id + ")"};
  }
  const PlacementProblem placement_problem{problem.graph, problem.cluster, *problem.costs, options};
  SearchBudget budget;
  budget.seed = args.problem.seed;
  auto outcome = run_placement_method(args.method, placement_problem, budget);
  if (!outcome) throw CliError(outcome.error().message);
  return {outcome.value().placement, args.method};
}

// The store: for --best, --profiled, and to add the run's times to the profiles (unless --no-record).
std::unique_ptr<Store> open_store(const ExecuteArgs& args) {
  if (!args.best && !args.profiled && args.no_record) return nullptr;
  const std::string dir = args.data.empty() ? default_data_dir() : args.data;
  auto store = Store::open(dir);
  if (!store) throw CliError(store.error().message);
  return std::move(store).value();
}

double relative_error(double predicted, double measured) { return measured > 0 ? predicted / measured - 1 : 0; }

nlohmann::json report_json(const Problem& problem, const ChosenPlacement& chosen, const Measurement& m,
                           const SimResult& measured, const SimResult& simulated) {
  return {{"graph", problem.graph_label},
          {"cluster", problem.cluster.name()},
          {"placement", chosen.source},
          {"backend", m.backend},
          {"measured",
           {{"median", m.median}, {"min", m.min}, {"max", m.max}, {"spread", m.spread()}, {"makespans", m.makespans},
            {"busy", measured.busy}, {"transfers", measured.transfers}, {"transfer_bytes", measured.transfer_bytes},
            {"transfer_time", measured.transfer_time}}},
          {"simulated",
           {{"makespan", simulated.makespan}, {"busy", simulated.busy}, {"transfers", simulated.transfers},
            {"transfer_bytes", simulated.transfer_bytes}, {"transfer_time", simulated.transfer_time}}},
          {"error", relative_error(simulated.makespan, m.median)}};
}

void print_report(const Problem& problem, const ChosenPlacement& chosen, const Measurement& m, const SimResult& measured,
                  const SimResult& simulated) {
  const std::string& unit = problem.graph.cost_unit();
  std::cout << problem.graph_label << " on " << problem.cluster.name() << ", placement: " << chosen.source << "\n"
            << m.makespans.size() << " timed runs on the " << m.backend << " backend: median "
            << format_time(m.median, "s") << ", min " << format_time(m.min, "s") << ", max " << format_time(m.max, "s")
            << " (spread " << format_fixed(100 * m.spread(), 1) << "%)\n\n";
  TextTable t({"", "makespan", "transfers", "moved", "busy per device"});
  auto busy = [&](const SimResult& r, const std::string& u) {
    std::string text;
    for (double b : r.busy) text += (text.empty() ? "" : "  ") + format_time(b, u);
    return text;
  };
  t.add({"measured (median run)", format_time(m.median, "s"), std::to_string(measured.transfers),
         format_bytes(measured.transfer_bytes), busy(measured, "s")});
  t.add({"simulated", format_time(simulated.makespan, unit), std::to_string(simulated.transfers),
         format_bytes(simulated.transfer_bytes), busy(simulated, unit)});
  t.print(std::cout);
  if (unit == "s")
    std::cout << "\nsimulator error: " << (simulated.makespan >= m.median ? "+" : "")
              << format_fixed(100 * relative_error(simulated.makespan, m.median), 1) << "% of the measured median\n";
  else
    std::cout << "\nthe graph's costs are in " << unit << ", not seconds: the simulated times do not compare\n";
}

// --coordinator: the measurement is a job of that cluster, run on a worker that offers the
// cluster's devices (gantry worker --devices cpu:N); the coordinator records it with its stored
// best and adds it to its profiles. --best means the coordinator's stored best.
void run_remote_execute(const ExecuteArgs& args) {
  if (args.out.wants_timeline()) throw CliError("--trace and --svg need the run's timeline: run without --coordinator");
  if (args.no_record) throw CliError("--no-record: a coordinator always adds its measurements to its profiles");
  Problem problem = load_problem(args.problem);
  const SimOptions options = args.sim.options();
  ProfileTable profiles;
  if (args.profiled) {
    profiles = load_profiles(args.data.empty() ? default_data_dir() : args.data);
    use_profiles(problem, profiles);
  }
  JobSpec spec;
  spec.kind = "measure";
  spec.problem = make_problem_spec(problem.graph, problem.cluster, options, problem.graph_label, graph_to_json(problem.graph, -1),
                                   args.profiled ? &profiles : nullptr);
  if (!args.best) spec.measure.placement = choose_placement(args, problem, options, nullptr).placement;
  spec.measure.repeats = args.repeats;
  spec.measure.warmup = args.warmup;
  spec.measure.throttle_links = args.throttle;
  spec.measure.pin_threads = !args.no_pin;
  spec.priority = args.priority;
  const JobRecord job = follow_remote_job(spec, args.remote);
  print_jobs(std::cout, {job}, args.out.json(), "at " + args.remote.client().endpoint);
  std::cout.flush();
  if (job.state == JobState::cancelled) throw CliExit{kExitCancelled, "measurement job " + job.id + " cancelled"};
  if (job.state != JobState::complete) throw CliExit{1, "measurement job " + job.id + " " + to_string(job.state) + ": " + job.message};
}

void run_execute(const ExecuteArgs& args) {
  const int sources = !args.placement_file.empty() + args.best + !args.method.empty();
  if (sources != 1) throw CliError("give one of --placement FILE, --best or --method NAME");
  refuse_gantry_exec_remote(args.gantry_exec, !args.remote.endpoint.empty());
  if (!args.remote.endpoint.empty()) return run_remote_execute(args);
  Problem problem = load_problem(args.problem);
  // In this process only on CPU cores; a gantry-exec program also runs other clusters on the GPUs.
  const std::string backend = args.gantry_exec.empty() ? "cpu" : measure_backend(problem.cluster);
  if (Status cpu = check_cpu_cluster(problem.cluster); !cpu && backend == "cpu")
    throw CliError(cpu.error().message + " (this process measures on CPU cores; --gantry-exec PATH measures on GPUs "
                   "through a gantry-exec built with CUDA)");
  ExecOptions exec;
  exec.repeats = args.repeats;
  exec.warmup = args.warmup;
  exec.throttle_links = args.throttle;
  exec.pin_threads = !args.no_pin;
  // Before a placement is chosen or the store opened: what the program cannot run, and whether it starts.
  const int program_gpus =
      args.gantry_exec.empty() ? 0 : checked_gantry_exec(args.gantry_exec, backend, problem.cluster, exec);
  const SimOptions options = args.sim.options();
  std::unique_ptr<Store> store = open_store(args);
  if (args.profiled) use_profiles(problem, require_profiles(*store));
  const ChosenPlacement chosen = choose_placement(args, problem, options, store.get());
  if (auto valid = chosen.placement.check(problem.graph, problem.cluster, chosen.source); !valid)
    throw CliError(valid.error().message);

  if (!args.out.json())
    std::fprintf(stderr, "executing %d ops on %d %s devices%s: %d warm-up and %d timed runs...\n", problem.graph.size(),
                 problem.cluster.size(), backend == "cpu" ? "CPU" : "GPU",
                 args.gantry_exec.empty() ? "" : (" through " + args.gantry_exec).c_str(), args.warmup, args.repeats);
  auto measured = !args.gantry_exec.empty()
                      ? execute_through(args.gantry_exec, backend, problem.graph, chosen.placement, problem.cluster, exec)
                      : execute_on_cpu(problem.graph, chosen.placement, problem.cluster, exec);
  if (!measured) throw CliError(measured.error().message);
  const Measurement& m = measured.value();
  const SimResult timeline = measured_timeline(m.median_run, problem.cluster.size());
  if (args.best) {  // `query best` shows the measurement beside the simulated makespan
    auto recorded = store->record_measurement(fingerprint(problem.graph), runtime_key(args, problem, options, *store),
                                              chosen.placement, m.median, static_cast<int>(m.makespans.size()), m.backend);
    if (!recorded)
      std::fprintf(stderr, "gantry: the measurement was not recorded with the stored best: %s\n",
                   recorded.error().message.c_str());
    else if (!recorded.value())
      std::fprintf(stderr, "gantry: the stored best changed while this ran; the measurement was not recorded with it\n");
  }
  const bool shared_gpus = !gives_profile_samples(backend, program_gpus, problem.cluster);
  if (shared_gpus && !args.no_record)
    std::fprintf(stderr, "gantry: %d devices ran on %d GPU(s), as partitions; their times were not added to the profiles\n",
                 problem.cluster.size(), program_gpus);
  if (store && !args.no_record && !shared_gpus) {  // every run teaches the profiles
    ProfileTable samples;  // solo times, by the co-run slowdown the store's profiles know
    auto stored = store->profiles();
    if (!stored) {
      std::fprintf(stderr, "gantry: the measurement was not added to the profiles: %s\n", stored.error().message.c_str());
    } else {
      add_profile_samples(problem.graph, problem.cluster, m.median_run, &samples,
                          co_run_slowdowns(problem.cluster, &stored.value()));
      if (auto added = store->add_profiles(samples); !added)
        std::fprintf(stderr, "gantry: the measurement was not added to the profiles: %s\n", added.error().message.c_str());
    }
  }

  SimOptions full = options;
  full.record = true;
  const SimResult simulated = Simulator(problem.graph, *problem.costs, problem.cluster, full).run(chosen.placement);
  if (args.out.wants_timeline())
    write_timelines(args.out, problem, timeline,
                    problem.graph_label + " on " + problem.cluster.name() + " - measured, " + chosen.source);
  if (args.out.json())
    std::cout << report_json(problem, chosen, m, timeline, simulated).dump(2) << "\n";
  else
    print_report(problem, chosen, m, timeline, simulated);
}

}  // namespace

void add_execute_command(CLI::App& app) {
  auto args = std::make_shared<ExecuteArgs>();
  CLI::App* cmd = app.add_subcommand(
      "execute",
      "run a placement for real on this machine's CPU cores (one core per device of the cluster, real ATen kernels, "
      "real copies between devices), or on its GPUs through --gantry-exec, and compare the measured makespan with "
      "the simulator's");
  args->problem.add_to(*cmd);
  cmd->add_option("--placement", args->placement_file, "placement JSON (from `gantry place -f json` or `query export`)")->check(file_path());
  cmd->add_flag("--best", args->best,
                "the stored best placement of this graph on this cluster (local store); the measurement is recorded "
                "with it, so `gantry query best` shows it");
  cmd->add_option("-m,--method", args->method, "place with a method first: single, round-robin, random, cp, heft, search");
  cmd->add_option("--data", args->data, "store directory: stored bests, profiles (default ./gantry-data or $GANTRY_DATA)");
  cmd->add_option("--repeats", args->repeats, "timed runs; the median is the measurement")
      ->capture_default_str()
      ->check(whole_in(1, 1000));
  cmd->add_option("--warmup", args->warmup, "untimed runs before them")->capture_default_str()->check(whole_in(0, 1000));
  cmd->add_flag("--throttle", args->throttle,
                "make each transfer last at least the cluster link's latency + bytes / bandwidth");
  cmd->add_flag("--no-pin", args->no_pin, "do not pin device threads to cores");
  add_gantry_exec_option(*cmd, args->gantry_exec, "not with --coordinator");
  add_profiled_flag(*cmd, args->profiled);
  cmd->add_flag("--no-record", args->no_record, "do not add this run's op and transfer times to the store's profiles");
  args->sim.add_to(*cmd);
  args->out.add_to(*cmd);
  args->remote.add_to(*cmd,
                      "measure on this coordinator's cluster (tcp://HOST:PORT), on a worker started with --devices cpu:N, "
                      "instead of on this machine; --best is then the coordinator's stored best");
  add_priority_option(*cmd, args->priority);
  cmd->footer(
      "The graph's ops run their operations (core/operation.hpp; generated chainmm, ffnn and llama graphs have them) "
      "or, without one, a GEMM of their flops. Size graphs for the CPU, e.g.\n"
      "  gantry execute --workload ffnn:batch=512,hidden=512 --cluster cpu-2 --method heft --trace run.json");
  cmd->callback([args] { run_execute(*args); });
}

}  // namespace gantry::cli
