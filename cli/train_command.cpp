// gantry train: DOPPLER's learned placement. Imitation of the critical-path teacher (stage I) and
// policy gradient on simulated makespans (stage II) over one or more graphs; rollout threads
// generate episodes while the learner trains; the policy and each graph's best placement go to
// the store.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "actors/train_job.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/duration.hpp"
#include "cli/learning_curve.hpp"
#include "cli/train_job.hpp"
#include "cli/policy_source.hpp"
#include "cli/stop_signals.hpp"
#include "cli/text_table.hpp"
#include "sim/timeline_export.hpp"
#include "core/fingerprint.hpp"
#include "core/graph_io.hpp"
#include "core/unix_time.hpp"
#include "learner/trainer.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct LoadedProblems {
  std::vector<std::unique_ptr<Problem>> owned;
  std::vector<TrainingProblem> training;
  std::vector<ProblemSpec> specs;  // the same problems as content, for the rollout pool's workers
};

LoadedProblems load_problems(const TrainArgs& args, const SimOptions& sim) {
  LoadedProblems out;
  auto add = [&](const std::string& graph, const std::string& workload) {
    ProblemArgs p;
    p.graph_file = graph;
    p.workload = workload;
    p.cluster = args.cluster;
    p.seed = args.seed;
    out.owned.push_back(std::make_unique<Problem>(load_problem(p)));
    const Problem& loaded = *out.owned.back();
    out.training.push_back(make_training_problem(loaded.graph_label, loaded.graph, loaded.cluster, *loaded.costs, sim));
    out.specs.push_back(make_problem_spec(loaded.graph, loaded.cluster, sim, loaded.graph_label));
  };
  for (const std::string& g : args.graphs) add(g, "");
  for (const std::string& w : args.workloads) add("", w);
  if (out.training.empty()) throw CliError("train needs a graph: --graph FILE or --workload SPEC (either may repeat)");
  return out;
}

PolicyModel initial_model(const TrainArgs& args, int devices, std::string& parent, long& parent_episodes) {
  if (!args.init.empty()) {
    LoadedPolicy p = load_policy(args.init, args.data);
    if (args.ablation != to_string(p.weights.config.ablation))
      throw CliError("--init " + p.label + " is a " + to_string(p.weights.config.ablation) + " policy, not " + args.ablation);
    parent = p.label;
    parent_episodes = p.record.episodes;
    return PolicyModel(p.weights);
  }
  PolicyConfig c;
  c.hidden = args.hidden;
  c.head = args.head;
  c.state = args.state;
  c.steps = args.steps;
  c.ablation = *parse_ablation(args.ablation);
  c.devices = c.ablation == Ablation::gdp ? devices : 0;
  return PolicyModel(c, args.seed);
}

void print_point(const char* stage, const CurvePoint& p) {
  std::fprintf(stderr, "[%-3s] episode %7ld  v%-5llu  mean %.3fx  best %.3fx teacher  match %5.1f%%  entropy %.3f  %6.0f ep/s\n",
               stage, p.episodes, static_cast<unsigned long long>(p.version), p.mean_ratio, p.best_ratio, 100 * p.match,
               p.entropy, p.episodes_per_second);
}

// One batch's summary as an episode record (which graph, how many episodes, best and mean makespan).
Status record_batch(Store* store, const std::string& run, long sequence, const EpisodeBatch& batch) {
  if (!store || batch.episodes.empty()) return Ok{};
  EpisodeRecord r;
  r.job_id = run;
  r.sequence = static_cast<std::uint64_t>(sequence);
  r.rollout = batch.problem;
  r.candidates = static_cast<long>(batch.episodes.size());
  r.best_makespan = batch.episodes.front().makespan;
  for (const Episode& e : batch.episodes) {
    r.best_makespan = std::min(r.best_makespan, e.makespan);
    r.mean_makespan += e.makespan / static_cast<double>(batch.episodes.size());
  }
  r.time = unix_now();
  return store->put_episodes({r});
}

// The stored form of a graph's best, as `gantry tune` stores its own.
ScheduleRecord schedule_record(const TrainingProblem& p, const ProblemOutcome& o, const std::string& job) {
  ScheduleRecord r;
  r.graph = fingerprint(*p.graph);
  r.cluster = runtime_fingerprint(*p.cluster, p.sim);
  r.graph_label = p.label;
  r.cluster_name = p.cluster->name();
  r.method = "doppler";
  r.sim = runtime_name(p.sim);
  r.unit = p.graph->cost_unit();
  r.makespan = o.best_makespan;
  r.lower_bound = makespan_lower_bound(*p.graph, *p.costs, *p.cluster, p.sim);
  r.placement = o.best;
  r.job_id = job;
  r.found_at = unix_now();
  r.evaluations = o.episodes;
  r.model_version = kModelVersion;
  r.sim_options = sim_options_json(p.sim);
  return r;
}

}  // namespace

void run_train(const TrainArgs& args) {
  const SimOptions sim = args.sim.options();
  if (!parse_ablation(args.ablation)) throw CliError("--ablation " + args.ablation + ": expected dual, plc-only, random-sel or gdp");
  double seconds = 0;
  if (!args.budget.empty()) {
    auto s = parse_duration(args.budget);
    if (!s) throw CliError("--budget: " + s.error().message);
    seconds = s.value();
  }
  if (seconds <= 0 && args.episodes <= 0) throw CliError("train needs --episodes N or --budget T");
  if (Status ok = valid_policy_name(args.name); !ok) throw CliError("--name: " + ok.error().message);
  if (!args.curve.empty() && !is_learning_curve_path(args.curve))
    throw CliError("--curve " + args.curve + ": the file must end in .csv or .svg");
  std::shared_ptr<Store> store;
  if (!args.no_store) {  // opened first: a busy store fails the command before it trains
    auto opened = Store::open(args.data);
    if (!opened) throw CliError(opened.error().message);
    store = std::move(opened).value();
  }
  LoadedProblems problems = load_problems(args, sim);
  std::string parent;
  long parent_episodes = 0;
  PolicyModel model = initial_model(args, problems.training.front().cluster->size(), parent, parent_episodes);
  set_training_threads(1);

  std::vector<std::pair<Stage, double>> stages;  // stage and its share of the budget
  if (args.stage == "il") stages = {{Stage::imitation, 1.0}};
  else if (args.stage == "sim") stages = {{Stage::reinforce, 1.0}};
  else stages = {{Stage::imitation, args.il_share}, {Stage::reinforce, 1.0 - args.il_share}};

  std::fprintf(stderr, "training %s policy on %zu graph(s), %s, %s (Ctrl-C stops and keeps what was learned)\n",
               args.ablation.c_str(), problems.training.size(), problems.training.front().cluster->name().c_str(),
               runtime_name(sim).c_str());
  std::vector<CurvePoint> curve;
  std::vector<ProblemOutcome> best;
  long episodes = 0, batches = 0;
  std::string store_error;
  // Names this run's episode summaries in the store (`episodes` family) and its bests' job.
  const std::string run_id = "train-" + args.name + "-" + std::to_string(static_cast<long long>(unix_now() * 1000));
  double train_seconds = 0, rollout_seconds = 0, learner_seconds = 0;
  StopSignals signals;
  for (const auto& [stage, share] : stages) {
    if (share <= 0) continue;
    TrainOptions o;
    o.stage = stage;
    o.episodes = args.episodes > 0 ? std::max(1L, static_cast<long>(args.episodes * share)) : 0;
    o.seconds = seconds * share;
    o.batch = args.batch;
    o.graphs_per_update = args.graphs_per_update;
    o.learning_rate = args.lr;
    o.entropy = args.entropy;
    o.epsilon = args.epsilon;
    o.max_staleness = args.staleness;
    o.imitate_ties = args.imitate == "ties";
    o.stale = args.stale == "drop" ? StalePolicy::drop : StalePolicy::weight;
    o.seed = args.seed + episodes;
    o.progress_every = args.progress_every > 0 ? args.progress_every
                                               : static_cast<long>(args.batch) * std::min<long>(args.graphs_per_update, problems.training.size()) * 10;
    TrainJobOptions job;
    job.rollouts = args.threads;
    job.store = store;
    const long offset = episodes;
    const double time_offset = train_seconds;
    TrainHooks hooks;
    hooks.on_progress = [&](const CurvePoint& p) {
      CurvePoint q = p;
      q.episodes += offset;
      q.seconds += time_offset;
      curve.push_back(q);
      print_point(to_string(stage), q);
    };
    hooks.on_batch = [&](const EpisodeBatch& b) {
      if (Status st = record_batch(store.get(), run_id, ++batches, b); !st && store_error.empty())
        store_error = "storing the episodes of " + run_id + ": " + st.error().message;
    };
    // A store that fails stops the run (the learner's thread must not unwind through the cluster).
    hooks.should_stop = [&] { return StopSignals::requested().load() || !store_error.empty(); };
    auto result = run_train_job(model, problems.training, problems.specs, o, job, hooks);
    if (!result) throw CliError(result.error().message);
    if (!store_error.empty()) throw CliError(store_error);
    const TrainResult& r = result.value();
    episodes += r.episodes + r.dropped;
    train_seconds += r.seconds;
    rollout_seconds += r.rollout_seconds;
    learner_seconds += r.learner_seconds;
    if (best.empty()) {
      best = r.problems;
    } else {
      for (std::size_t i = 0; i < best.size(); ++i) {
        if (r.problems[i].best_makespan < best[i].best_makespan) {
          best[i].best_makespan = r.problems[i].best_makespan;
          best[i].best = r.problems[i].best;
        }
        best[i].greedy_makespan = r.problems[i].greedy_makespan;
        best[i].episodes += r.problems[i].episodes;
      }
    }
    if (StopSignals::requested()) break;
  }

  TextTable table({"graph", "ops", "teacher (cp)", "best", "greedy", "best vs teacher"});
  double best_ratio = 0, greedy_ratio = 0;
  for (std::size_t i = 0; i < best.size(); ++i) {
    const TrainingProblem& p = problems.training[i];
    const std::string& unit = p.graph->cost_unit();
    best_ratio += best[i].best_makespan / p.teacher_makespan / best.size();
    greedy_ratio += best[i].greedy_makespan / p.teacher_makespan / best.size();
    table.add({p.label, std::to_string(p.graph->size()), format_time(p.teacher_makespan, unit),
               format_time(best[i].best_makespan, unit), format_time(best[i].greedy_makespan, unit),
               format_fixed(100 * (1 - best[i].best_makespan / p.teacher_makespan), 1) + "% lower"});
  }
  table.print(std::cout);
  std::printf("%ld episodes in %.1fs (%.0f episodes/s); rollouts %.1fs, learner %.1fs\n", episodes, train_seconds,
              episodes / std::max(1e-9, train_seconds), rollout_seconds, learner_seconds);

  const PolicyWeights weights = model.weights();
  // Files last: a file that cannot be written must not cost the stored policy.
  auto write_files = [&] {
    if (!args.save.empty())
      if (auto s = write_text_file(args.save, weights.to_bytes()); !s) throw CliError("--save: " + s.error().message);
    if (!args.curve.empty())
      write_learning_curve(args.curve, curve, "gantry train " + args.ablation + " on " + problems.training.front().label);
  };
  if (!store) return write_files();
  PolicyRecord record;
  record.name = args.name;
  record.weights = weights.to_bytes();
  record.stage = args.stage;
  record.ablation = args.ablation;
  for (const TrainingProblem& p : problems.training) record.graphs += (record.graphs.empty() ? "" : ",") + p.label;
  record.cluster_name = problems.training.front().cluster->name();
  record.devices = problems.training.front().cluster->size();
  record.episodes = parent_episodes + episodes;
  record.seconds = train_seconds;
  record.best_ratio = best_ratio;
  record.greedy_ratio = greedy_ratio;
  record.parent = parent;
  record.created = unix_now();
  auto stored = store->put_policy(record);
  if (!stored) throw CliError(stored.error().message);
  const std::string label = stored.value().name + ":" + std::to_string(stored.value().version);
  for (std::size_t i = 0; i < best.size(); ++i) {
    const TrainingProblem& p = problems.training[i];
    auto g = store->put_graph(fingerprint(*p.graph), graph_to_json(*p.graph, -1));
    auto c = g ? store->put_cluster(runtime_fingerprint(*p.cluster, p.sim), p.cluster->to_yaml()) : g;
    auto b = c ? store->put_if_better(schedule_record(p, best[i], run_id)) : Result<bool>(c.error());
    if (!b) throw CliError("storing the best of " + p.label + ": " + b.error().message);
  }
  if (Status synced = store->sync_wal(); !synced) throw CliError(synced.error().message);
  std::printf("policy %s stored in %s with %ld batch summaries of run %s\n(gantry place --method doppler --policy %s --data %s)\n",
              label.c_str(), args.data.c_str(), batches, run_id.c_str(), label.c_str(), args.data.c_str());
  write_files();
  if (StopSignals::requested()) throw CliExit{kExitCancelled, "training stopped early; what it learned is stored"};
}

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "learn a DOPPLER placement policy (imitation, then RL on the simulator)");
  cmd->footer(
      "Stages: il imitates the critical-path teacher (highest bottom level first, earliest start);\n"
      "sim is policy gradient on simulated makespans; il+sim (the default) gives il a share of the budget\n"
      "(--il-share). Several --graph/--workload pre-train one policy on all of them. The policy is stored\n"
      "as NAME:VERSION (--name), with the best placement of each graph (method doppler).\n"
      "Example: gantry train --workload llama-block:costs=doppler --cluster identical:4 --sim doppler --budget 60s");
  args->data = default_data_dir();
  cmd->add_option("--graph", args->graphs, "graph file (gantry .json, DOPPLER .txt, STG .stg); may repeat");
  cmd->add_option("--workload", args->workloads, "generated workload (see `gantry workloads`); may repeat");
  cmd->add_option("--cluster", args->cluster, "preset, identical:N or a YAML file")->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of generators, weights and sampling")->capture_default_str();
  args->sim.add_to(*cmd);
  cmd->add_option("--stage", args->stage, "il, sim or il+sim")->check(CLI::IsMember({"il", "sim", "il+sim"}))->capture_default_str();
  cmd->add_option("--episodes", args->episodes, "episodes to train on (all stages)")->check(CLI::Range(1L, 1000000000L));
  cmd->add_option("--budget", args->budget, "training time (e.g. 60s, 5m), all stages");
  cmd->add_option("--il-share", args->il_share, "share of the budget il+sim gives imitation")->check(finite_in(0, 1))->capture_default_str();
  cmd->add_option("--init", args->init, "start from a stored policy NAME[:VERSION], a .policy file, or builtin (the shipped policy)");
  cmd->add_option("--name", args->name, "name to store the policy under")->capture_default_str();
  cmd->add_option("--ablation", args->ablation, "dual (DOPPLER), plc-only (topological order), random-sel, gdp (one pass)")
      ->check(CLI::IsMember({"dual", "plc-only", "random-sel", "gdp"}))->capture_default_str();
  cmd->add_option("--curve", args->curve, "write the learning curve (.csv or .svg)");
  cmd->add_option("--save", args->save, "also write the policy to this file (.policy)");
  cmd->add_option("--data", args->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  cmd->add_flag("--no-store", args->no_store, "do not store the policy or the placements");
  cmd->add_option("--batch", args->batch, "episodes per graph per update")->check(CLI::Range(2, 4096))->capture_default_str();
  cmd->add_option("--graphs-per-update", args->graphs_per_update, "graphs whose batches make one update")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--threads", args->threads, "rollout slots of the embedded worker (episodes go through the rollout pool)")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--lr", args->lr, "learning rate (0: 1e-3 for il, 3e-4 for sim)")->check(finite_in(0, 1));
  cmd->add_option("--entropy", args->entropy, "entropy bonus weight")->check(finite_in(0, 10))->capture_default_str();
  cmd->add_option("--epsilon", args->epsilon, "uniform exploration mixed into sampling (sim)")->check(finite_in(0, 1))->capture_default_str();
  cmd->add_option("--imitate", args->imitate,
                  "il targets: ties (every tied teacher choice, multi-label) or pick (the teacher's own tie-break)")
      ->check(CLI::IsMember({"ties", "pick"}))->capture_default_str();
  cmd->add_option("--staleness", args->staleness, "versions a batch may lag behind the learner")->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--stale", args->stale, "older batches: drop them, or weight them by importance")
      ->check(CLI::IsMember({"drop", "weight"}))->capture_default_str();
  cmd->add_option("--hidden", args->hidden, "node embedding width (new policies)")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--head", args->head, "head width (new policies)")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--state", args->state, "width of per-step feature embeddings (new policies)")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--steps", args->steps, "message-passing rounds (new policies)")->check(CLI::Range(0, 32))->capture_default_str();
  cmd->add_option("--progress-every", args->progress_every, "episodes between progress lines (0: about 10 updates)");
  cmd->callback([args] { run_train(*args); });
}

}  // namespace gantry::cli
