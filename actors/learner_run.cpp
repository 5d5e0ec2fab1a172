#include "actors/learner_run.hpp"

#include "actors/measured_episode_source.hpp"
#include "actors/mixed_episode_source.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "actors/messages.hpp"
#include "actors/pool_episode_source.hpp"
#include "actors/problem_spec.hpp"
#include "actors/store_requests.hpp"
#include "core/hex.hpp"
#include "core/unix_time.hpp"
#include "learner/learned_placement.hpp"
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
    r.measured_backend = "cpu";
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

// Keeps each graph's best over the stages; the greedy makespan is the last stage's.
void merge_stage(std::vector<LearnedGraph>& graphs, const TrainResult& r) {
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const ProblemOutcome& o = r.problems[i];
    if (graphs[i].best.device.empty() || o.best_makespan < graphs[i].best_makespan) {
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
  record.devices = problems.training.front().cluster->size();
  record.episodes = init.parent_episodes + report.episodes;
  record.seconds = report.seconds;
  record.best_ratio = report.best_ratio;
  record.greedy_ratio = report.greedy_ratio;
  record.parent = init.parent;
  record.created = unix_now();
  // The bests first: a policy is stored only with everything it found.
  for (std::size_t i = 0; i < report.graphs.size(); ++i) {
    const LearnedGraph& g = report.graphs[i];
    const BuiltProblem& b = *problems.built[i];
    auto content = ask_store<StoreReply>(self, store, put_content_atom::value, g.graph, b.spec.graph_json, g.runtime,
                                         b.spec.cluster_yaml);
    auto best = content && content.value().ok
                    ? ask_store<StoreReply>(self, store, put_best_atom::value,
                                            schedule_record(problems.training[i], g, report.episodes, job_id,
                                                            spec.train.stage == "real"))
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

}  // namespace

Status check_train_spec(const JobSpec& spec) {
  const TrainSpec& t = spec.train;
  if (!one_of(t.stage, {"il", "sim", "il+sim", "real"}))
    return make_error("--stage " + t.stage + ": expected il, sim, il+sim or real");
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
  PolicyModel& model = *init.value().model;
  set_training_threads(1);

  std::vector<std::pair<Stage, double>> stages;  // a stage and its share of the budget
  const TrainSpec& t = spec.train;
  if (t.stage == "il") stages = {{Stage::imitation, 1.0}};
  else if (t.stage == "sim") stages = {{Stage::reinforce, 1.0}};
  else if (t.stage == "real") stages = {{Stage::measured, 1.0}};
  else stages = {{Stage::imitation, t.il_share}, {Stage::reinforce, 1.0 - t.il_share}};
  // Stage III: rewards are makespans measured on a worker's executor devices, relative to the
  // teachers' measured makespans (actors/measured_episode_source.hpp).
  const bool measured = t.stage == "real";
  const auto stop = [&] { return hooks.should_stop && hooks.should_stop(); };
  std::optional<PoolMeasurer> measurer;
  std::vector<TrainingProblem> measured_problems;
  if (measured) {
    measurer.emplace(system, pool, job_id, p.built, spec.priority, MeasureRequest{}, stop);
    measurer->teach_profiles(store);  // every measured run adds to the store's profiles
    auto teachers = measured_teachers(p.training, *measurer);
    if (!teachers) return teachers.error();
    measured_problems = std::move(teachers).value();
  }
  const std::vector<TrainingProblem>& problems_trained = measured ? measured_problems : p.training;

  LearnerReport report;
  for (std::size_t i = 0; i < problems_trained.size(); ++i) {
    const TrainingProblem& tp = problems_trained[i];
    LearnedGraph g;
    g.label = tp.label;
    g.unit = tp.graph->cost_unit();
    g.cluster = tp.cluster->name();
    g.ops = static_cast<long>(tp.graph->size());
    g.teacher_makespan = tp.teacher_makespan;
    g.graph = fingerprint(*tp.graph);
    g.runtime = runtime_fingerprint(*tp.cluster, tp.sim);
    report.graphs.push_back(std::move(g));
  }
  for (const auto& [stage, share] : stages) {
    if (share <= 0 || stop()) continue;
    const TrainOptions o = stage_options(spec, stage, share, report.episodes, p.training.size());
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
      self->send(store, put_episode_atom::value, batch_record(job_id, first_sequence + report.batches, b));
      ++report.batches;
    };
    train_hooks.should_stop = stop;
    Result<TrainResult> result = make_error("training did not run");
    if (measured) {
      MeasuredEpisodeSource measured_source(problems_trained, *measurer);
      try {
        if (t.measured_share < 1) {  // simulated exploration beside the measured episodes
          PoolEpisodeSource simulated(system, pool, job_id, p.specs, spec.priority);
          std::vector<double> to_simulated;
          for (std::size_t i = 0; i < p.training.size(); ++i)
            to_simulated.push_back(p.training[i].teacher_makespan / problems_trained[i].teacher_makespan);
          MixedEpisodeSource mixed(simulated, measured_source, to_simulated, t.measured_share);
          result = train(model, p.training, mixed, o, train_hooks);
        } else {
          result = train(model, problems_trained, measured_source, o, train_hooks);
        }
        if (result)
          if (auto on_clock = measure_outcomes(model.weights(), problems_trained, *measurer, &result.value()); !on_clock)
            result = on_clock.error();
      } catch (const std::exception& e) {
        result = make_error(std::string("training failed: ") + e.what());
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
    merge_stage(report.graphs, r);
  }
  report.stopped = stop();
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
  return report;
}

}  // namespace gantry
