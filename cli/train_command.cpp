// gantry train: DOPPLER's learned placement. Imitation of the critical-path teacher (stage I) and
// policy gradient on simulated makespans (stage II) over one or more graphs, as a learner job:
// on the embedded cluster, or on a coordinator's (--coordinator), whose workers generate the
// episodes while the learner trains; the policy and each graph's best placement go to the store.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <thread>

#include "actors/embedded_job.hpp"
#include "actors/learner_run.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/duration.hpp"
#include "cli/job_args.hpp"
#include "cli/learning_curve.hpp"
#include "cli/output_path.hpp"
#include "cli/policy_files.hpp"
#include "cli/policy_source.hpp"
#include "cli/schedule_source.hpp"
#include "cli/stop_signals.hpp"
#include "cli/text_table.hpp"
#include "cli/train_job.hpp"

#include <nlohmann/json.hpp>
#include "core/hex.hpp"
#include "core/json_util.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

// The job's graphs as content, each on every cluster: the first is the JobSpec's problem, the
// others follow it.
std::vector<ProblemSpec> problem_specs(const TrainArgs& args, const SimOptions& sim) {
  std::vector<ProblemSpec> specs;
  ProfileTable profiles;
  if (args.profiled) profiles = load_profiles(args.data);  // before the job opens the store as its writer
  auto add = [&](const std::string& graph, const std::string& workload) {
    for (const std::string& cluster : args.clusters) {
      ProblemArgs p;
      p.graph_file = graph;
      p.workload = workload;
      p.cluster = cluster;
      p.seed = args.seed;
      const Problem loaded = load_problem(p);
      specs.push_back(make_problem_spec(loaded.graph, loaded.cluster, sim, loaded.graph_label, "",
                                        args.profiled ? &profiles : nullptr));
    }
  };
  for (const std::string& g : args.graphs) add(g, "");
  for (const std::string& w : args.workloads) add("", w);
  if (specs.empty()) throw CliError("train needs a graph: --graph FILE or --workload SPEC (either may repeat)");
  return specs;
}

// The learner job `args` ask for. A policy file given to --init travels as its bytes; a stored
// name or "builtin" is found by whoever runs the job.
JobSpec train_job_spec(const TrainArgs& args) {
  JobSpec spec;
  spec.kind = "train";
  if (!args.budget.empty()) {
    auto s = parse_duration(args.budget);
    if (!s) throw CliError("--budget: " + s.error().message);
    spec.budget_seconds = s.value();
  } else {
    spec.budget_seconds = 0;
  }
  spec.seed = args.seed;
  spec.priority = args.priority;
  TrainSpec& t = spec.train;
  t.stage = args.stage;
  t.episodes = args.episodes;
  t.il_share = args.il_share;
  t.name = args.name;
  // A file, or with --no-store a stored policy of --data (the job's own store is then a scratch
  // one), goes as its bytes.
  if (is_policy_file(args.init) || (args.no_store && !args.init.empty() && args.init != "builtin")) {
    LoadedPolicy file = load_policy(args.init, args.data);
    t.init_hex = hex_encode(file.weights.to_bytes());
    t.init_label = file.label;
  } else {
    t.init = args.init;
  }
  t.ablation = args.ablation;
  t.hidden = args.hidden;
  t.head = args.head;
  t.state = args.state;
  t.steps = args.steps;
  t.batch = args.batch;
  t.graphs_per_update = args.graphs_per_update;
  t.learning_rate = args.lr;
  t.entropy = args.entropy;
  t.epsilon = args.epsilon;
  t.imitate = args.imitate;
  t.max_staleness = args.staleness;
  t.stale = args.stale;
  t.progress_every = args.progress_every;
  t.measured_share = args.measured_share;
  if (Status ok = check_train_spec(spec); !ok) throw CliError(ok.error().message);  // before the graphs load
  std::vector<ProblemSpec> problems = problem_specs(args, args.sim.options());
  spec.problem = problems.front();
  t.more_problems.assign(problems.begin() + 1, problems.end());
  return spec;
}

void print_point(Stage stage, const CurvePoint& p) {
  std::fprintf(stderr, "[%-3s] episode %7ld  v%-5llu  mean %.3fx  best %.3fx teacher  match %5.1f%%  entropy %.3f  %6.0f ep/s\n",
               to_string(stage), p.episodes, static_cast<unsigned long long>(p.version), p.mean_ratio, p.best_ratio,
               100 * p.match, p.entropy, p.episodes_per_second);
}

// "5.9% lower" or "5.9% higher" than the teacher's makespan.
std::string vs_teacher(double best, double teacher) {
  const double lower = 100 * (1 - best / teacher);
  return format_fixed(std::abs(lower), 1) + (lower >= 0 ? "% lower" : "% higher");
}

void print_report(const LearnerReport& r) {
  TextTable table({"graph", "ops", "cluster", "teacher (cp)", "best", "greedy", "best vs teacher"});
  for (const LearnedGraph& g : r.graphs)
    table.add({g.label, std::to_string(g.ops), g.cluster, format_time(g.teacher_makespan, g.unit), format_time(g.best_makespan, g.unit),
               format_time(g.greedy_makespan, g.unit), vs_teacher(g.best_makespan, g.teacher_makespan)});
  table.print(std::cout);
  std::printf("%ld episodes in %.1fs (%.0f episodes/s); rollouts %.1fs, learner %.1fs\n", r.episodes, r.seconds,
              r.episodes / std::max(1e-9, r.seconds), r.rollout_seconds, r.learner_seconds);
}

// The report as JSON: per graph its teacher's, best and greedy makespans (with the placement of
// the best), then the run's totals and where the policy went (`policy` and `job` empty with
// --no-store).
nlohmann::json report_json(const LearnerReport& r, const TuneOutcome& o, bool stored) {
  nlohmann::json graphs = nlohmann::json::array();
  for (const LearnedGraph& g : r.graphs)
    graphs.push_back({{"graph", g.label}, {"ops", g.ops}, {"cluster", g.cluster}, {"unit", g.unit},
                      {"teacher_makespan", g.teacher_makespan}, {"best_makespan", g.best_makespan},
                      {"greedy_makespan", g.greedy_makespan}, {"best_placement", g.best.device}});
  return {{"graphs", graphs},
          {"episodes", r.episodes},
          {"seconds", r.seconds},
          {"rollout_seconds", r.rollout_seconds},
          {"learner_seconds", r.learner_seconds},
          {"best_ratio", r.best_ratio},
          {"greedy_ratio", r.greedy_ratio},
          {"policy", stored ? r.policy : ""},
          {"job", stored ? o.job_id : ""},
          {"state", to_string(o.state)}};
}

// With --coordinator the job is the coordinator's: the policy and its curve are in its store, and
// --save / --curve fetch them from there once the job has ended.
void run_remote_train(const TrainArgs& args, const RemoteArgs& remote) {
  if (args.format == "json")
    throw CliError("-f json: with --coordinator the job is followed on stderr and its policy read with gantry query "
                   "policy --coordinator ... --job ID -f json; the JSON report is for a run in this process");
  if (args.no_store)
    throw CliError("--no-store is for a run in this process; with --coordinator the policy is stored by the coordinator "
                   "(gantry query policies --coordinator ...)");
  check_curve_path(args.curve);
  check_output_path("--curve", args.curve);
  check_output_path("--save", args.save);
  std::function<void(const JobRecord&)> fetch;
  if (!args.save.empty() || !args.curve.empty())
    fetch = [&](const JobRecord& job) {
      const std::optional<PolicyRecord> policy = remote_schedules(remote)->policy_of_job(job.id);
      if (!policy && job.state == JobState::cancelled) {  // stopped before it learned anything: no files
        std::cerr << "job " << job.id << " was cancelled before it stored a policy: nothing to write\n";
        return;
      }
      if (!policy) throw CliError("job " + job.id + " stored no policy at " + remote.client().endpoint);
      write_policy_files(*policy, args.save, args.curve);
      std::cerr << "policy " << policy->name << ":" << policy->version << " fetched"
                << (args.save.empty() ? "" : "; weights in " + args.save) << (args.curve.empty() ? "" : "; curve in " + args.curve) << "\n";
    };
  submit_job_spec(train_job_spec(args), remote, true, false, fetch);
}

// Stage III measures on this machine, through the embedded worker's executor devices: CPU-kind
// clusters on one core per device, or as many devices as the largest cluster has (devices then
// share cores, as the user asked); other clusters on the GPUs, as many devices as it has.
ExecutorDevices embedded_devices(const JobSpec& spec) {
  ExecutorDevices devices{"cpu", static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  std::vector<ProblemSpec> problems = spec.train.more_problems;
  problems.push_back(spec.problem);
  int largest = 0;
  for (const ProblemSpec& p : problems)
    if (auto cluster = Cluster::from_yaml(p.cluster_yaml, "the training cluster")) {
      largest = std::max(largest, cluster.value().size());
      if (measure_backend(cluster.value()) == "cuda") devices.backend = "cuda";
    }
  devices.count = devices.backend == "cuda" ? largest : std::max(devices.count, largest);
  return devices;
}

}  // namespace

void run_train(const TrainArgs& args, const RemoteArgs& remote) {
  refuse_gantry_exec_remote(args.gantry_exec, !remote.endpoint.empty());
  if (!remote.endpoint.empty()) return run_remote_train(args, remote);
  if (!args.gantry_exec.empty() && args.stage != "real" && args.stage != "il+sim+real")
    throw CliError("--gantry-exec " + args.gantry_exec + " measures stage III's episodes: give --stage real or il+sim+real");
  check_curve_path(args.curve);
  check_output_path("--curve", args.curve);  // before training, not after it
  check_output_path("--save", args.save);
  const std::unique_ptr<TempFolder> scratch = no_store_folder(args.no_store, "gantry-train");
  const std::string data = scratch ? scratch->path() : args.data;
  auto opened = Store::open(data);  // first: a busy store fails the command before it loads or trains
  if (!opened) throw CliError(opened.error().message);
  const JobSpec spec = train_job_spec(args);

  std::string clusters;
  for (const std::string& c : args.clusters) clusters += (clusters.empty() ? "" : ", ") + c;
  std::fprintf(stderr, "training %s policy on %zu graph(s), %s (Ctrl-C stops and keeps what was learned)\n",
               args.ablation.c_str(), 1 + spec.train.more_problems.size(), clusters.c_str());
  std::optional<LearnerReport> report;
  EmbeddedJobOptions options;
  options.rollouts = args.threads;
  const bool stage_three = args.stage == "real" || args.stage == "il+sim+real";
  if (args.devices.count > 0) options.devices = args.devices;
  else if (stage_three) options.devices = embedded_devices(spec);
  if (!args.gantry_exec.empty()) {
    options.devices.program = args.gantry_exec;
    options.devices.program_gpus = visible_gpus(args.gantry_exec);
  }
  if (stage_three && options.devices.backend == "cuda" && options.devices.gpus() == 0)
    throw CliError("stage III on " + clusters + " measures on GPUs (the clusters' devices are not of kind CPU), and " +
                   (options.devices.program.empty()
                        ? std::string("this process sees none (or its LibTorch has no CUDA: --gantry-exec PATH measures "
                                      "through a gantry-exec built against one)")
                        : options.devices.program + " sees none") +
                   "; use a cpu-N cluster or a coordinator with a `gantry worker --devices cuda:N`");
  options.cancel = &StopSignals::requested();
  options.hooks.on_learning = print_point;
  options.hooks.on_learned = [&](const LearnerReport& r) { report = r; };
  Result<TuneOutcome> outcome = make_error("not run");
  {
    StopSignals signals;
    outcome = run_embedded_job(std::move(opened).value(), spec, options);
  }
  if (!outcome) throw CliError(outcome.error().message);
  const TuneOutcome& o = outcome.value();
  if (!report && o.state == JobState::cancelled) throw CliExit{kExitCancelled, "training stopped before it trained: " + o.stop_reason};
  if (!report) throw CliError("training job " + o.job_id + " " + to_string(o.state) + ": " + o.stop_reason);
  if (args.format == "json")
    std::cout << report_json(*report, o, !scratch).dump(2) << "\n";
  else
    print_report(*report);
  // Files last: a file that cannot be written must not cost the stored policy.
  if (!args.save.empty())
    if (auto s = write_text_file(args.save, report->weights); !s) throw CliError("--save: " + s.error().message);
  if (!args.curve.empty()) write_learning_curve(args.curve, report->curve, "gantry train " + args.ablation + " on " + report->graphs.front().label);
  if (!scratch && args.format != "json")
    std::printf("policy %s stored in %s with %ld batch summaries of job %s\n(gantry place --method doppler --policy %s --data %s)\n",
                report->policy.c_str(), data.c_str(), report->batches, o.job_id.c_str(), report->policy.c_str(), data.c_str());
  if (o.state == JobState::cancelled)
    throw CliExit{kExitCancelled, scratch ? "training stopped early" : "training stopped early; what it learned is stored"};
}

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "learn a DOPPLER placement policy (imitation, then RL on the simulator)");
  cmd->footer(
      "Stages: il imitates the critical-path teacher (highest bottom level first, earliest start);\n"
      "sim is policy gradient on simulated makespans; il+sim (the default) gives il a share of the budget\n"
      "(--il-share). Several --graph/--workload pre-train one policy on all of them. The policy is stored\n"
      "as NAME:VERSION (--name), with the best placement of each graph (method doppler).\n"
      "With --coordinator the job runs there (its store keeps the policy; --init NAME is looked up there).\n"
      "Example: gantry train --workload llama-block:costs=doppler --cluster identical:4 --sim doppler --budget 60s");
  args->data = default_data_dir();
  cmd->add_option("--graph", args->graphs, "graph file (gantry .json, DOPPLER .txt, STG .stg); may repeat");
  cmd->add_option("--workload", args->workloads, "generated workload (see `gantry workloads`); may repeat");
  cmd->add_option("--cluster", args->clusters,
                  "preset, identical:N or a YAML file; may repeat: every graph is trained on each (one policy for any device count)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of generators, weights and sampling")->capture_default_str()->check(seed_number());
  args->sim.add_to(*cmd);
  cmd->add_option("--stage", args->stage,
                  "il, sim, il+sim, real (stage III: policy gradient on makespans measured by executors: this machine's "
                  "cores for cpu-N clusters, its GPUs for others, or with --coordinator a worker's --devices; median of 3 runs, relative to the "
                  "teacher's measured makespan; start it from a stage II policy with --init), or il+sim+real (all "
                  "three; stage III gets a quarter of the budget after imitation, and is skipped when no worker "
                  "offers the cluster's devices)")
      ->check(CLI::IsMember({"il", "sim", "il+sim", "real", "il+sim+real"}))
      ->capture_default_str();
  cmd->add_option("--episodes", args->episodes, "episodes to train on (all stages), in whole batches of --batch episodes: at least this many")->check(whole_in(1, 1000000000));
  cmd->add_option("--budget", args->budget, "training time (e.g. 60s, 5m), all stages");
  cmd->add_option("--il-share", args->il_share, "share of the budget il+sim gives imitation")->check(finite_in(0, 1))->capture_default_str();
  cmd->add_option("--init", args->init, "start from a stored policy NAME[:VERSION], a .policy file, or builtin (the shipped policy)");
  cmd->add_option("--name", args->name, "name to store the policy under")->capture_default_str();
  cmd->add_option("--ablation", args->ablation, "dual (DOPPLER), plc-only (topological order), random-sel, gdp (one pass)")
      ->check(CLI::IsMember({"dual", "plc-only", "random-sel", "gdp"}))->capture_default_str();
  cmd->add_flag("--profiled", args->profiled,
                "cost the graphs with the measured profiles of --data (gantry profile) instead of the roofline: "
                "stage II then trains on the calibrated simulator, and bests are stored under the profiles' key "
                "(with --coordinator the profiles travel with the job)");
  cmd->add_option("--curve", args->curve, "write the learning curve (.csv or .svg)")->check(file_path());
  cmd->add_option("--save", args->save, "also write the policy to this file (.policy)");
  cmd->add_option("--data", args->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  cmd->add_flag("--no-store", args->no_store, "do not store the policy or the placements");
  add_gantry_exec_option(*cmd, args->gantry_exec, "with --stage real or il+sim+real (it measures stage III's episodes), not with --coordinator");
  cmd->add_option("--batch", args->batch, "episodes per graph per update")->check(whole_in(2, 4096))->capture_default_str();
  cmd->add_option("--graphs-per-update", args->graphs_per_update, "graphs whose batches make one update")->check(whole_in(1, 4096))->capture_default_str();
  cmd->add_option("--threads", args->threads, "rollout slots of the embedded worker (episodes go through the rollout pool)")->check(whole_in(1, 256))->capture_default_str();
  cmd->add_option("--lr", args->lr, "learning rate (0: 1e-3 for il, 3e-4 for sim)")->check(finite_in(0, 1));
  cmd->add_option("--entropy", args->entropy, "entropy bonus weight")->check(finite_in(0, 10))->capture_default_str();
  cmd->add_option("--epsilon", args->epsilon, "uniform exploration mixed into sampling (sim)")->check(finite_in(0, 1))->capture_default_str();
  cmd->add_option("--imitate", args->imitate,
                  "il targets: ties (every tied teacher choice, multi-label) or pick (the teacher's own tie-break)")
      ->check(CLI::IsMember({"ties", "pick"}))->capture_default_str();
  cmd->add_option("--staleness", args->staleness, "versions a batch may lag behind the learner")->check(whole_in(0, 1000))->capture_default_str();
  cmd->add_option("--stale", args->stale, "older batches: drop them, or weight them by importance")
      ->check(CLI::IsMember({"drop", "weight"}))->capture_default_str();
  cmd->add_option("--hidden", args->hidden, "node embedding width (new policies)")->check(whole_in(1, 1024))->capture_default_str();
  cmd->add_option("--head", args->head, "head width (new policies)")->check(whole_in(1, 1024))->capture_default_str();
  cmd->add_option("--state", args->state, "width of per-step feature embeddings (new policies)")->check(whole_in(1, 1024))->capture_default_str();
  cmd->add_option("--steps", args->steps, "message-passing rounds (new policies)")->check(whole_in(0, 32))->capture_default_str();
  cmd->add_option("--measured-share", args->measured_share,
                  "stage III: the share of episodes measured for real; the others are simulated on the rollout slots "
                  "(cheap exploration), their rewards on the simulator's clock, the measured ones on the machine's")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  cmd->add_option("--progress-every", args->progress_every, "episodes between progress lines (0: about 10 updates)")
      ->check(whole_in(0, 1000000000));
  cmd->add_option("-f,--format", args->format,
                  "output: table, or json (per graph the teacher's, best and greedy makespans and the best placement; "
                  "episodes, seconds, the stored policy and job); progress lines go to stderr either way")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  auto remote = std::make_shared<RemoteArgs>();
  remote->add_to(*cmd, "run the learner job on this coordinator (tcp://HOST:PORT), its episodes on the cluster's workers, and follow it");
  add_priority_option(*cmd, args->priority);
  cmd->callback([args, remote] { run_train(*args, *remote); });
}

}  // namespace gantry::cli
