#include "actors/learner_run.hpp"

#include "actors/measured_episode_source.hpp"
#include "actors/mixed_episode_source.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <chrono>
#include <optional>
#include <thread>

#include "actors/learner_checkpoint.hpp"
#include "actors/log_line.hpp"
#include "actors/messages.hpp"
#include "actors/pool_episode_source.hpp"
#include "actors/problem_spec.hpp"
#include "actors/store_requests.hpp"
#include "core/hex.hpp"
#include "core/unix_time.hpp"
#include "learner/learned_placement.hpp"
#include "learner/learning_curve.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"
#include "storage/store.hpp"

namespace gantry {

namespace {

bool one_of(const std::string& value, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return value == n; });
}

struct Problems {
  std::vector<std::shared_ptr<const BuiltProblem>> built;
  std::vector<ProblemSpec> specs;
  std::vector<TrainingProblem> training;
};

Result<Problems> build_problems(const JobSpec& spec, ProblemCache* cache) {
  Problems out;
  out.specs.push_back(spec.problem);
  out.specs.insert(out.specs.end(), spec.train.more_problems.begin(), spec.train.more_problems.end());
  for (std::size_t i = 0; i < out.specs.size(); ++i) {
    auto built = cache ? cache->build(out.specs[i]) : build_problem(out.specs[i]);
    if (!built) return make_error("graph " + std::to_string(i + 1) + " (" + out.specs[i].graph_label + "): " + built.error().message);
    out.built.push_back(built.value());
  }
  for (const auto& b : out.built)  // after every build: the training problems point into them
    out.training.push_back(make_training_problem(b->spec.graph_label, b->graph, b->cluster, *b->costs, b->sim));
  return out;
}

struct InitialPolicy {
  std::unique_ptr<PolicyModel> model;
  std::string parent;          // what it was trained from ("" when new)
  long parent_episodes = 0;
};

Result<PolicyWeights> stored_weights(caf::scoped_actor& self, const caf::actor& store, const std::string& spec,
                                     InitialPolicy& out) {
  auto ref = parse_policy_ref(spec);
  if (!ref) return ref.error();
  auto found = ask_store<StoredPolicy>(self, store, get_policy_atom::value, ref.value().name, ref.value().version);
  if (!found) return found.error();
  if (!found.value().error.empty()) return make_error("policy '" + spec + "': " + found.value().error);
  if (!found.value().found) return make_error("policy '" + spec + "' is not in the store (`gantry query policies` lists what is)");
  const PolicyRecord& r = found.value().record;
  out.parent = r.name + ":" + std::to_string(r.version);
  out.parent_episodes = r.episodes;
  return PolicyWeights::from_bytes(r.weights, "policy " + out.parent);
}

Result<InitialPolicy> initial_policy(caf::scoped_actor& self, const caf::actor& store, const JobSpec& spec, int devices) {
  const TrainSpec& t = spec.train;
  InitialPolicy out;
  const Ablation ablation = *parse_ablation(t.ablation);
  if (t.init.empty() && t.init_hex.empty()) {
    PolicyConfig c;
    c.hidden = t.hidden;
    c.head = t.head;
    c.state = t.state;
    c.steps = t.steps;
    c.ablation = ablation;
    c.devices = ablation == Ablation::gdp ? devices : 0;
    out.model = std::make_unique<PolicyModel>(c, spec.seed);
    return out;
  }
  Result<PolicyWeights> weights = make_error("no policy");
  if (!t.init_hex.empty()) {
    std::string bytes;
    if (!hex_decode(t.init_hex, bytes)) return make_error("init policy " + t.init_label + ": its bytes are not hex");
    out.parent = t.init_label;
    weights = PolicyWeights::from_bytes(bytes, "policy " + t.init_label);
  } else if (t.init == "builtin") {
    out.parent = "builtin";
    weights = default_policy();
  } else {
    weights = stored_weights(self, store, t.init, out);
  }
  if (!weights) return make_error("--init: " + weights.error().message);
  if (weights.value().config.ablation != ablation)
    return make_error("--init " + out.parent + " is a " + to_string(weights.value().config.ablation) + " policy, not " + t.ablation);
  out.model = std::make_unique<PolicyModel>(weights.value());
  return out;
}

// A batch's summary as an episode record of the job (graph, episodes, best and mean makespan).
EpisodeRecord batch_record(const std::string& job_id, long sequence, const EpisodeBatch& batch) {
  EpisodeRecord r;
  r.job_id = job_id;
  r.sequence = static_cast<std::uint64_t>(sequence);
  r.rollout = batch.problem;
  r.candidates = static_cast<long>(batch.episodes.size());
  r.best_makespan = batch.episodes.front().makespan;
  for (const Episode& e : batch.episodes) {
    r.best_makespan = std::min(r.best_makespan, e.makespan);
    r.mean_makespan += e.makespan / static_cast<double>(batch.episodes.size());
  }
  r.time = unix_now();
  return r;
}

// The stored form of a graph's best, as a tuning job stores its own.
// A stage III best was measured: its record keeps the simulated makespan (the key is the simulated
// runtime, and other records compare with it) and the measurement beside it.
ScheduleRecord schedule_record(const TrainingProblem& p, const LearnedGraph& g, long episodes, const std::string& job_id,
                               bool measured) {
  ScheduleRecord r;
  r.graph = g.graph;
  r.cluster = g.runtime;
  r.graph_label = p.label;
  r.cluster_name = p.cluster->name();
  r.method = "doppler";
  r.sim = runtime_name(p.sim);
  r.unit = p.graph->cost_unit();
  r.makespan = g.best_makespan;
  r.lower_bound = makespan_lower_bound(*p.graph, *p.costs, *p.cluster, p.sim);
  r.placement = g.best;
  r.job_id = job_id;
  r.found_at = unix_now();
  r.evaluations = episodes;
  r.model_version = kModelVersion;
  r.sim_options = sim_options_json(p.sim);
  if (measured) {
    r.measured = g.best_makespan;
    r.measured_runs = MeasureRequest{}.repeats;
    r.measured_backend = measure_backend(*p.cluster);
    r.measured_at = r.found_at;
    r.makespan = Simulator(*p.graph, *p.costs, *p.cluster, p.sim).makespan(g.best);
  }
  return r;
}

TrainOptions stage_options(const JobSpec& spec, Stage stage, double share, long episodes_before, std::size_t graphs) {
  const TrainSpec& t = spec.train;
  TrainOptions o;
  o.stage = stage;
  o.episodes = t.episodes > 0 ? std::max(1L, static_cast<long>(t.episodes * share)) : 0;
  o.seconds = spec.budget_seconds * share;
  o.batch = t.batch;
  o.graphs_per_update = t.graphs_per_update;
  o.learning_rate = t.learning_rate;
  o.entropy = t.entropy;
  o.epsilon = t.epsilon;
  o.max_staleness = t.max_staleness;
  o.imitate_ties = t.imitate == "ties";
  o.stale = t.stale == "drop" ? StalePolicy::drop : StalePolicy::weight;
  o.seed = spec.seed + static_cast<std::uint64_t>(episodes_before);
  o.progress_every = t.progress_every > 0
                         ? t.progress_every
                         : static_cast<long>(t.batch) * std::min<long>(t.graphs_per_update, static_cast<long>(graphs)) * 10;
  return o;
}

// Keeps each graph's best over the stages; the greedy makespan is the last stage's. `replace`: the
// stage's bests are on another clock (measured), so they replace the earlier ones.
void merge_stage(std::vector<LearnedGraph>& graphs, const TrainResult& r, bool replace) {
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const ProblemOutcome& o = r.problems[i];
    if (replace || graphs[i].best.device.empty() || o.best_makespan < graphs[i].best_makespan) {
      graphs[i].best_makespan = o.best_makespan;
      graphs[i].best = o.best;
    }
    graphs[i].greedy_makespan = o.greedy_makespan;
  }
}

// Adds `name` to a comma-separated list that does not hold it yet.
void append_once(std::string& list, const std::string& name) {
  if (("," + list + ",").find("," + name + ",") == std::string::npos) list += (list.empty() ? "" : ",") + name;
}

Result<std::string> store_results(caf::scoped_actor& self, const caf::actor& store, const JobSpec& spec,
                                  const Problems& problems, const InitialPolicy& init, const LearnerReport& report,
                                  const std::string& job_id) {
  const TrainSpec& t = spec.train;
  PolicyRecord record;
  record.name = t.name;
  record.weights = report.weights;
  record.stage = t.stage;
  record.ablation = t.ablation;
  for (const LearnedGraph& g : report.graphs) append_once(record.graphs, g.label);
  for (const TrainingProblem& t : problems.training) append_once(record.cluster_name, t.cluster->name());
  // The device count it was trained on; 0 when its clusters differ (a gdp policy has one count).
  record.devices = problems.training.front().cluster->size();
  for (const TrainingProblem& t : problems.training)
    if (t.cluster->size() != record.devices) record.devices = 0;
  record.episodes = init.parent_episodes + report.episodes;
  record.seconds = report.seconds;
  record.best_ratio = report.best_ratio;
  record.greedy_ratio = report.greedy_ratio;
  record.parent = init.parent;
  record.created = unix_now();
  record.job = job_id;
  record.curve = learning_curve_csv(report.curve);
  // The bests first: a policy is stored only with everything it found.
  for (std::size_t i = 0; i < report.graphs.size(); ++i) {
    const LearnedGraph& g = report.graphs[i];
    const BuiltProblem& b = *problems.built[i];
    auto content = ask_store<StoreReply>(self, store, put_content_atom::value, g.graph, b.spec.graph_json, g.runtime,
                                         b.spec.cluster_yaml);
    auto best = content && content.value().ok
                    ? ask_store<StoreReply>(self, store, put_best_atom::value,
                                            schedule_record(problems.training[i], g, report.episodes, job_id,
                                                            report.measured))
                    : content;
    if (!best) return make_error("storing the best of " + g.label + ": " + best.error().message);
    if (!best.value().ok) return make_error("storing the best of " + g.label + ": " + best.value().error);
  }
  auto stored = ask_store<StoredPolicy>(self, store, put_policy_atom::value, record);
  if (!stored) return stored.error();
  if (!stored.value().error.empty()) return make_error(stored.value().error);
  auto synced = ask_store<StoreReply>(self, store, sync_atom::value);  // the batch summaries too
  if (!synced) return synced.error();
  if (!synced.value().ok) return make_error(synced.value().error);
  return stored.value().record.name + ":" + std::to_string(stored.value().record.version);
}

// The stages of a learner job with their shares of the budget. il+sim+real (DOPPLER's three
// stages, `tune --method doppler` with executors attached) gives stage III a quarter of what
// follows imitation: measured episodes are slow, the simulator serves most of the exploration.
std::vector<std::pair<Stage, double>> stage_plan(const TrainSpec& t) {
  constexpr double kRealShareOfRl = 0.25;
  if (t.stage == "il") return {{Stage::imitation, 1.0}};
  if (t.stage == "sim") return {{Stage::reinforce, 1.0}};
  if (t.stage == "real") return {{Stage::measured, 1.0}};
  if (t.stage == "il+sim+real")
    return {{Stage::imitation, t.il_share},
            {Stage::reinforce, (1.0 - t.il_share) * (1 - kRealShareOfRl)},
            {Stage::measured, (1.0 - t.il_share) * kRealShareOfRl}};
  return {{Stage::imitation, t.il_share}, {Stage::reinforce, 1.0 - t.il_share}};
}

// Stage III: every episode measured, or (measured_share < 1) that share of them with simulated
// episodes from the workers beside them. The result's bests are measured (measure_outcomes).
// `measured_bests`: whether the result's bests are measured makespans (they are not when the stage
// was stopped before its outcomes were measured: the trainer's are the simulator's prices).
Result<TrainResult> train_measured(PolicyModel& model, const Problems& p, const std::vector<TrainingProblem>& measured_problems,
                                   PoolMeasurer& measurer, caf::actor_system& system, const caf::actor& pool,
                                   const JobSpec& spec, const std::string& job_id, const TrainOptions& o,
                                   const TrainHooks& train_hooks, bool* measured_bests) {
  const bool mixed = spec.train.measured_share < 1;
  Result<TrainResult> result = make_error("training did not run");
  MeasuredEpisodeSource measured_source(measured_problems, measurer);
  try {  // an exception must not unwind through the sources' actors
    if (mixed) {
      PoolEpisodeSource simulated(system, pool, job_id, p.specs, spec.priority);
      std::vector<double> to_simulated;
      for (std::size_t i = 0; i < p.training.size(); ++i)
        to_simulated.push_back(p.training[i].teacher_makespan / measured_problems[i].teacher_makespan);
      MixedEpisodeSource mixed(simulated, measured_source, to_simulated, spec.train.measured_share);
      result = train(model, p.training, mixed, o, train_hooks);
    } else {
      result = train(model, measured_problems, measured_source, o, train_hooks);
    }
    // The trainer prices its bests and its greedy episode with the simulator: they are measured
    // here, on a copy that replaces the result only when every measurement came back. A stop
    // (before or during them) keeps the simulated ones: a stop must not wait for executors.
    *measured_bests = false;
    if (result && !measurer.stopping()) {
      TrainResult measured = result.value();
      if (auto on_clock = measure_outcomes(model.weights(), measured_problems, measurer, &measured); on_clock) {
        result = std::move(measured);
        *measured_bests = true;
      } else if (!measurer.stopping()) {
        result = on_clock.error();
      }
    }
  } catch (const std::exception& e) {
    result = make_error(std::string("training failed: ") + e.what());
  }
  return result;
}

// The part of a stage left after a checkpoint's `episodes` and `seconds` of it: false when none is.
bool resume_stage(TrainOptions& o, long episodes, double seconds) {
  double done = 0;
  if (o.episodes > 0) done = std::max(done, static_cast<double>(episodes) / static_cast<double>(o.episodes));
  if (o.seconds > 0) done = std::max(done, seconds / o.seconds);
  if (done >= 1) return false;
  if (o.episodes > 0) o.episodes = std::max(1L, o.episodes - episodes);
  if (o.seconds > 0) o.seconds -= seconds;
  o.progress_before = done;
  return true;
}

// The checkpoint a job left when its process died, if it fits the job (as many stages and graphs).
std::optional<LearnerCheckpoint> stored_checkpoint(caf::scoped_actor& self, const caf::actor& store, const std::string& job_id,
                                                   std::size_t stages, const std::vector<TrainingProblem>& graphs) {
  auto stored = ask_store<StoredCheckpoint>(self, store, get_checkpoint_atom::value, job_id);
  const auto ignored = [&](const std::string& why) {
    log_line("gantry: job " + job_id + ": its checkpoint is ignored, the job starts over: " + why);
    return std::nullopt;
  };
  if (!stored) return ignored(stored.error().message);
  if (!stored.value().error.empty()) return ignored(stored.value().error);
  if (!stored.value().found) return std::nullopt;
  auto c = decode_checkpoint(stored.value().bytes);
  if (!c) return ignored(c.error().message);
  if (static_cast<std::size_t>(c.value().stage) > stages || c.value().bests.size() != graphs.size())
    return ignored("it was written for another stage plan or other graphs");
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const Placement& best = c.value().bests[i];
    if (best.device.empty()) continue;  // none yet
    if (Status fits = best.check(*graphs[i].graph, *graphs[i].cluster, "its best of " + graphs[i].label); !fits)
      return ignored(fits.error().message);
  }
  return std::move(c).value();
}

// Where a job stands: the stage in progress (`stage`, with what the run of it so far did), the
// report's totals before it and each graph's best of the report and of the stage so far.
LearnerCheckpoint checkpoint_of(const LearnerReport& report, int stage, const TrainResult* so_far, long stage_episodes_before,
                                double stage_seconds_before, bool measured_folded, const PolicyModel& model) {
  LearnerCheckpoint c;
  c.stage = stage;
  c.measured_folded = measured_folded;
  c.stage_episodes = stage_episodes_before + (so_far ? so_far->episodes + so_far->dropped : 0);
  c.stage_seconds = stage_seconds_before + (so_far ? so_far->seconds : 0);
  c.episodes = report.episodes + (so_far ? so_far->episodes + so_far->dropped : 0);
  c.batches = report.batches;
  c.seconds = report.seconds + (so_far ? so_far->seconds : 0);
  c.weights = model.weights().to_bytes();
  for (std::size_t i = 0; i < report.graphs.size(); ++i) {
    const LearnedGraph& g = report.graphs[i];
    double best = g.best.device.empty() ? std::numeric_limits<double>::infinity() : g.best_makespan;
    Placement placement = g.best;
    if (so_far && so_far->problems[i].best_makespan < best) {
      best = so_far->problems[i].best_makespan;
      placement = so_far->problems[i].best;
    }
    c.best_makespans.push_back(best);
    c.bests.push_back(std::move(placement));
  }
  return c;
}

void put_checkpoint(caf::scoped_actor& self, const caf::actor& store, const std::string& job_id, const LearnerCheckpoint& c) {
  auto put = ask_store<StoreReply>(self, store, put_checkpoint_atom::value, job_id, encode_checkpoint(c));
  const std::string error = !put ? put.error().message : put.value().error;
  if (!error.empty()) log_line("gantry: job " + job_id + ": its checkpoint was not stored: " + error);
}

}  // namespace

Status check_train_spec(const JobSpec& spec) {
  const TrainSpec& t = spec.train;
  if (!one_of(t.stage, {"il", "sim", "il+sim", "real", "il+sim+real"}))
    return make_error("--stage " + t.stage + ": expected il, sim, il+sim, real or il+sim+real");
  if (!parse_ablation(t.ablation)) return make_error("--ablation " + t.ablation + ": expected dual, plc-only, random-sel or gdp");
  if (!one_of(t.imitate, {"ties", "pick"})) return make_error("--imitate " + t.imitate + ": expected ties or pick");
  if (!one_of(t.stale, {"drop", "weight"})) return make_error("--stale " + t.stale + ": expected drop or weight");
  if (spec.budget_seconds <= 0 && t.episodes <= 0) return make_error("a learner job needs --episodes N or --budget T");
  if (t.episodes < 0) return make_error("--episodes must be >= 0");
  if (!(t.measured_share > 0 && t.measured_share <= 1)) return make_error("--measured-share must be in (0, 1]");
  if (!(t.il_share >= 0 && t.il_share <= 1)) return make_error("--il-share must be between 0 and 1");
  if (t.batch < 2) return make_error("--batch " + std::to_string(t.batch) + ": a batch needs at least 2 episodes (its baseline)");
  if (t.graphs_per_update < 1) return make_error("--graphs-per-update must be >= 1");
  if (t.max_staleness < 0) return make_error("--staleness must be >= 0");
  if (t.hidden < 1 || t.head < 1 || t.state < 1 || t.steps < 0) return make_error("--hidden, --head and --state must be >= 1, --steps >= 0");
  if (!(t.learning_rate >= 0 && t.entropy >= 0 && t.epsilon >= 0 && t.epsilon <= 1))
    return make_error("--lr and --entropy must be >= 0, --epsilon between 0 and 1");
  if (Status ok = valid_policy_name(t.name); !ok) return make_error("--name: " + ok.error().message);
  return Ok{};
}

Result<LearnerReport> run_learner(caf::actor_system& system, const caf::actor& store, const caf::actor& pool,
                                  const JobSpec& spec, const std::string& job_id, ProblemCache* cache,
                                  const LearnerHooks& hooks, long first_sequence) {
  if (Status ok = check_train_spec(spec); !ok) return ok.error();
  auto problems = build_problems(spec, cache);
  if (!problems) return problems.error();
  const Problems& p = problems.value();
  for (const TrainingProblem& tp : p.training)
    if (spec.train.ablation == "gdp" && tp.cluster->size() != p.training.front().cluster->size())
      return make_error("a gdp policy places on one device count; its graphs are on " + p.training.front().cluster->name() +
                        " and " + tp.cluster->name());
  caf::scoped_actor self{system};
  auto init = initial_policy(self, store, spec, p.training.front().cluster->size());
  if (!init) return init.error();
  const TrainSpec& t = spec.train;
  std::vector<std::pair<Stage, double>> stages = stage_plan(t);
  // A rerun of a job whose process died goes on from its checkpoint. The checkpoint goes when the
  // job ends here with its report (done or stopped), not when the process dies, nor on an error: a
  // coordinator shutting down fails its learners (its pool and store go), and reruns them after
  // its restart.
  std::optional<LearnerCheckpoint> resumed;
  if (hooks.checkpoints) resumed = stored_checkpoint(self, store, job_id, stages.size(), p.training);
  if (resumed) {
    auto weights = PolicyWeights::from_bytes(resumed->weights, "the checkpoint of job " + job_id);
    if (weights) {
      init.value().model = std::make_unique<PolicyModel>(weights.value());
    } else {
      log_line("gantry: job " + job_id + ": its checkpoint is ignored, the job starts over: " + weights.error().message);
      resumed.reset();
    }
  }
  const auto keep_checkpoint = [&](const LearnerCheckpoint& c) {
    if (hooks.checkpoints) put_checkpoint(self, store, job_id, c);
  };
  PolicyModel& model = *init.value().model;
  set_training_threads(1);

  const auto stop = [&] { return hooks.should_stop && hooks.should_stop(); };
  const auto shutting_down = [&] { return stop() && hooks.shutting_down && hooks.shutting_down(); };
  // Stage III: rewards are makespans measured on a worker's executor devices, relative to the
  // teachers' measured makespans (actors/measured_episode_source.hpp).
  std::optional<PoolMeasurer> measurer;
  if (std::any_of(stages.begin(), stages.end(), [](const auto& s) { return s.first == Stage::measured; })) {
    measurer.emplace(system, pool, job_id, p.built, spec.priority, MeasureRequest{}, stop);
    measurer->teach_profiles(store);  // every measured run adds to the store's profiles
  }
  std::vector<TrainingProblem> measured_problems;  // with measured teachers, once stage III starts
  bool measured_last = false;                      // the bests are measured ones

  LearnerReport report;
  for (std::size_t i = 0; i < p.training.size(); ++i) {
    const TrainingProblem& tp = p.training[i];
    LearnedGraph g;
    g.label = tp.label;
    g.unit = tp.graph->cost_unit();
    g.cluster = tp.cluster->name();
    g.ops = static_cast<long>(tp.graph->size());
    g.teacher_makespan = tp.teacher_makespan;
    g.graph = fingerprint(*tp.graph);
    g.runtime = p.built[i]->runtime;  // with the profiles' fingerprint when it is costed with them
    report.graphs.push_back(std::move(g));
  }
  if (resumed) {
    report.episodes = resumed->episodes;
    report.batches = resumed->batches;
    report.seconds = resumed->seconds;
    for (std::size_t i = 0; i < report.graphs.size(); ++i)
      if (std::isfinite(resumed->best_makespans[i])) {
        report.graphs[i].best_makespan = resumed->best_makespans[i];
        report.graphs[i].best = resumed->bests[i];
      }
    const std::string where = static_cast<std::size_t>(resumed->stage) == stages.size()
                                  ? "every stage done"
                                  : "stage " + std::to_string(resumed->stage + 1) + " of " + std::to_string(stages.size());
    log_line("gantry: job " + job_id + ": resumed from its checkpoint (" + where + ", " + std::to_string(resumed->episodes) +
             " episodes)");
  }
  long batches_sent = 0;  // batch summaries this run (numbered from first_sequence)
  // il+sim+real: whether stage II took stage III's share (no executors). A rerun keeps the choice,
  // and otherwise gives the workers that had executors time to come back to a restarted coordinator.
  bool measured_folded = resumed && resumed->measured_folded;
  const auto executors_ready = [&] {
    for (int wait = 0; resumed && wait < 300 && !stop() && !measurer->offered(); ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return measurer->offered();
  };
  for (std::size_t k = resumed ? static_cast<std::size_t>(resumed->stage) : 0; k < stages.size(); ++k) {
    const Stage stage = stages[k].first;
    double share = stages[k].second;
    const bool resuming = resumed && k == static_cast<std::size_t>(resumed->stage);
    // il+sim+real runs stage III only with executors attached; the workers have joined by the
    // time stage II starts (stage I's episodes came from them). Without, stage II takes its time.
    if (stage == Stage::reinforce && t.stage == "il+sim+real" && (measured_folded || !executors_ready())) {
      measured_folded = true;
      log_line("gantry: job " + job_id + ": no worker offers executor devices for every cluster; stage III skipped");
      share += stages.back().second;
      stages.back().second = 0;
    }
    if (share <= 0 || stop()) continue;
    TrainOptions o = stage_options(spec, stage, share, report.episodes, p.training.size());
    o.checkpoint_seconds = hooks.checkpoint_seconds;
    // What a checkpoint says the stage had before this run.
    const long stage_episodes_done = resuming ? resumed->stage_episodes : 0;
    const double stage_seconds_done = resuming ? resumed->stage_seconds : 0;
    if (resuming && !resume_stage(o, stage_episodes_done, stage_seconds_done)) continue;  // it had ended
    const long episodes_before = report.episodes;
    const double seconds_before = report.seconds;
    TrainHooks train_hooks;
    train_hooks.on_progress = [&, stage = stage](const CurvePoint& point) {
      CurvePoint q = point;
      q.episodes += episodes_before;
      q.seconds += seconds_before;
      report.curve.push_back(q);
      if (hooks.on_progress) hooks.on_progress(stage, q);
    };
    train_hooks.on_batch = [&](const EpisodeBatch& b) {
      if (b.episodes.empty()) return;
      self->send(store, put_episode_atom::value, batch_record(job_id, first_sequence + batches_sent++, b));
      ++report.batches;
    };
    train_hooks.should_stop = stop;
    if (stage != Stage::measured)  // stage III's bests are measured: a rerun measures that stage again
      train_hooks.on_checkpoint = [&, k](const TrainResult& so_far) {
        keep_checkpoint(checkpoint_of(report, static_cast<int>(k), &so_far, stage_episodes_done, stage_seconds_done,
                                      measured_folded, model));
      };
    Result<TrainResult> result = make_error("training did not run");
    bool measured_bests = false;  // the stage's bests are measured makespans
    if (stage == Stage::measured) {
      // In il+sim+real, stage III is an extra: without executors now, or when it fails, the job
      // keeps what stages I and II learned instead of failing with it.
      const bool optional = t.stage == "il+sim+real";
      if (optional && !executors_ready()) {
        log_line("gantry: job " + job_id + ": the executors left before stage III; it is skipped");
        continue;
      }
      if (measured_problems.empty()) {
        auto teachers = measured_teachers(p.training, *measurer);
        if (!teachers && optional && !stop()) {
          log_line("gantry: job " + job_id + ": stage III skipped: " + teachers.error().message);
          continue;
        }
        if (!teachers && stop()) break;  // stopped: what the stages before learned is kept
        if (!teachers) return teachers.error();
        measured_problems = std::move(teachers).value();
      }
      const PolicyWeights before = model.weights();
      result = train_measured(model, p, measured_problems, *measurer, system, pool, spec, job_id, o, train_hooks,
                              &measured_bests);
      if (!result && optional && !stop()) {  // the stored policy is the one its report describes
        log_line("gantry: job " + job_id + ": stage III failed and is left out: " + result.error().message);
        model.load(before);
        continue;
      }
    } else {
      PoolEpisodeSource source(system, pool, job_id, p.specs, spec.priority);  // its batches queue by the job's priority
      try {  // an exception must not unwind through the source's actors
        result = train(model, p.training, source, o, train_hooks);
      } catch (const std::exception& e) {
        result = make_error(std::string("training failed: ") + e.what());
      }
    }
    if (!result) return result.error();
    const TrainResult& r = result.value();
    report.episodes += r.episodes + r.dropped;
    report.seconds += r.seconds;
    report.rollout_seconds += r.rollout_seconds;
    report.learner_seconds += r.learner_seconds;
    if (measured_bests) {  // measured bests replace simulated ones: the clocks differ
      measured_last = true;
      for (std::size_t i = 0; i < report.graphs.size(); ++i)
        report.graphs[i].teacher_makespan = measured_problems[i].teacher_makespan;
    }
    merge_stage(report.graphs, r, measured_bests);
    if (stage != Stage::measured && !stop())  // a crash from here on goes on with the next stage
      keep_checkpoint(checkpoint_of(report, static_cast<int>(k + 1), nullptr, 0, 0, measured_folded, model));
    else if (stage != Stage::measured && shutting_down())  // the newest for the rerun
      keep_checkpoint(checkpoint_of(report, static_cast<int>(k), nullptr, stage_episodes_done + r.episodes + r.dropped,
                                    stage_seconds_done + r.seconds, measured_folded, model));
  }
  if (shutting_down())
    return make_error("shut down before it ended; a restart goes on from its checkpoint");
  // A rerun whose checkpoint had every stage done ran no greedy episode: the checkpoint policy's.
  for (std::size_t i = 0; resumed && i < report.graphs.size(); ++i) {
    LearnedGraph& g = report.graphs[i];
    if (g.greedy_makespan > 0) continue;
    auto greedy = greedy_episode(model.weights(), p.training[i]);
    if (!greedy) return greedy.error();
    g.greedy_makespan = greedy.value().makespan;
    if (g.best.device.empty() || g.greedy_makespan < g.best_makespan) {
      g.best_makespan = g.greedy_makespan;
      g.best = replay_placement(p.training[i], greedy.value());
    }
  }
  report.stopped = stop();
  report.measured = measured_last;
  if (report.episodes == 0) {
    report.nothing_learned = std::string("no episodes came back before the job ") + (report.stopped ? "was stopped" : "ended") +
                             " (does the cluster have a worker?); nothing was stored";
    return report;
  }
  for (const LearnedGraph& g : report.graphs) {
    report.best_ratio += g.best_makespan / g.teacher_makespan / static_cast<double>(report.graphs.size());
    report.greedy_ratio += g.greedy_makespan / g.teacher_makespan / static_cast<double>(report.graphs.size());
  }
  report.weights = model.weights().to_bytes();
  auto label = store_results(self, store, spec, p, init.value(), report, job_id);
  if (!label) return label.error();
  report.policy = label.value();
  return report;  // its checkpoint is dropped by the coordinator once the job's end is recorded
}

}  // namespace gantry
