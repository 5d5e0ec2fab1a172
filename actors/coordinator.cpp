#include "actors/coordinator.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <tuple>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "actors/background_improvement.hpp"
#include "actors/learner_actor.hpp"
#include "actors/learner_run.hpp"
#include "actors/log_line.hpp"
#include "actors/measure_job.hpp"
#include "actors/messages.hpp"
#include "actors/off_thread.hpp"
#include "actors/pipeline_job.hpp"
#include "actors/problem_spec.hpp"
#include "actors/tuner_actor.hpp"
#include "core/host_name.hpp"
#include "core/json_util.hpp"
#include "core/unix_time.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "storage/store.hpp"

namespace gantry {

namespace {

std::string new_job_id() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  static std::atomic<int> counter{0};  // two jobs of one process in one millisecond
  char buffer[80];
  std::snprintf(buffer, sizeof buffer, "job-%lld-%d-%d", ms, static_cast<int>(getpid()), counter++);
  return buffer;
}

struct Job {
  std::string id;
  JobSpec spec;
  JobHooks hooks;
  std::shared_ptr<const BuiltProblem> problem;
  JobRecord record;
  long order = 0;
  // From a client: its spec is in the store (kept apart from the record, which no longer carries
  // it once stored: every later put of the record would write the megabytes again).
  bool durable = false;
  caf::actor tuner;        // while running: its tuner, or its learner
  bool cancelled = false;  // asked to stop before its tuner existed
  // A learner job's stop flag: its learner blocks in training and polls it between batches.
  std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
  // Set with `stop` when the coordinator shuts down: the job is not over, a restart reruns it.
  std::shared_ptr<std::atomic<bool>> shutdown = std::make_shared<std::atomic<bool>>(false);
  TunerConfig::Resume resume;
  // A background improvement run (actors/background_improvement.hpp): the job whose spec it runs again.
  std::string background_of;
  bool background() const { return !background_of.empty(); }
};

// How a cancel is answered: whether the job is known here, and what became of it. Called once,
// maybe later: a job that had not started is answered once its CANCELLED record is stored (answered
// before, a crash in between would run the job again after the restart).
using CancelAnswer = std::function<void(bool known, const std::string& text)>;

struct CoordinatorState {
  CoordinatorOptions options;
  caf::actor store, pool;
  std::deque<Job> queue;                        // priority desc, then submission order
  std::map<std::string, Job> running;
  // Client jobs whose QUEUED record is being written (listed by the store already, not yet queued),
  // with the cancels that came meanwhile, answered once the job has ended CANCELLED.
  std::map<std::string, std::vector<CancelAnswer>> recording;
  // Submit keys (a client's, the same on its retries): those whose job is recorded, with its id
  // (read from the store's records at start, so a retry after a restart finds its job too), and
  // those whose job is being recorded, with the answers owed to the retries that came meanwhile.
  std::map<std::string, std::string> submitted;
  std::map<std::string, std::vector<std::function<void(const wire::Reply&)>>> submitting;
  bool keys_read = false;  // until the stored keys are read, keyed submits wait (a retry must find its job)
  std::vector<std::tuple<caf::actor, std::string, wire::Request>> before_keys;
  std::map<std::string, std::vector<caf::response_promise>> waiters;
  std::map<std::string, TuneOutcome> ended;     // outcomes for late await calls (the newest jobs)
  // Jobs whose end is being recorded: no longer running, not yet in `ended` (an await waits).
  std::set<std::string> closing;
  std::deque<std::string> ended_order;
  long next_order = 0;
  long malformed = 0;                           // client requests that could not be read
  // Background improvement: a run being prepared or running (its id once it has one), and when a
  // client job was last queued or running.
  bool improving = false;
  std::string improving_id;
  double clients_last_seen = 0;
  double improvement_started = 0;  // when the last run started: at most one per --improve duration
  // Jobs found unfit to run again (no stored spec: run in their own process; a spec that no
  // longer reads or builds), skipped from then on, so that they cannot stop the turns.
  std::set<std::string> unfit_sources;
  std::map<std::string, int> source_failures;  // failures that may pass (a store read, a build): 3 make unfit
  int submits_preparing = 0;  // submits whose problem is being built (not yet queued)
  int recovering = 0;         // a restart's interrupted jobs being rebuilt (not yet queued)
  static inline const char* name = "coordinator";
};

using Self = caf::stateful_actor<CoordinatorState>*;
constexpr std::size_t kOutcomesKept = 1000;

// Stores a job's record; `then` (when given) hears the store's error, empty once it is stored.
void put_job(Self self, const JobRecord& record, std::function<void(const std::string&)> then = {}) {
  const auto done = [=](const std::string& error) {
    if (!error.empty()) log_line(std::string() + "gantry: storing job " + record.id + " failed: " + error);
    if (then) then(error);
  };
  self->request(self->state.store, kStoreTimeout, put_job_atom::value, record)
      .then([=](const StoreReply& reply) { done(reply.ok ? std::string() : reply.error); },
            [=](const caf::error& e) { done(error_text(self->system(), e)); });
}

void drop_old_background_runs(Self self, const Fingerprint& graph, const Fingerprint& runtime);

void job_ended(Self self, const std::string& id, const TuneOutcome& outcome) {
  CoordinatorState& s = self->state;
  s.closing.erase(id);
  if (id == s.improving_id) {
    s.improving = false;
    s.improving_id.clear();
    drop_old_background_runs(self, outcome.graph, outcome.runtime);
  } else {
    s.clients_last_seen = unix_now();  // idle from now on, not from the next tick
  }
  for (auto& promise : s.waiters[id]) promise.deliver(outcome);
  s.waiters.erase(id);
  s.ended[id] = outcome;
  s.ended_order.push_back(id);
  if (s.ended_order.size() > kOutcomesKept) {
    s.ended.erase(s.ended_order.front());
    s.ended_order.pop_front();
  }
}

void start_next(Self self);

// A job's record message: a background run's says it is one, and of which job.
std::string record_message(const Job& job, const std::string& text) {
  if (!job.background()) return text;
  const std::string what = std::string(kBackgroundMessage) + " of job " + job.background_of;
  return text.empty() ? what : what + ": " + text;
}

void close_job(Self self, const std::string& id, const TuneOutcome& outcome) {
  CoordinatorState& s = self->state;
  auto it = s.running.find(id);
  if (it == s.running.end()) return;
  JobRecord record = it->second.record;
  record.state = outcome.state;
  record.finished = unix_now();
  record.message = record_message(it->second, outcome.stop_reason);
  record.evaluations = outcome.evaluations;
  record.best_makespan = outcome.best.makespan;
  self->send(s.pool, drop_problem_atom::value, it->second.problem->key);
  const bool learner = it->second.spec.kind == "train";
  s.running.erase(it);
  s.closing.insert(id);
  const auto ended = [=] {
    job_ended(self, id, outcome);
    start_next(self);
  };
  // The answer waits for the record, so whoever hears of the end finds it in the store.
  self->request(s.store, kStoreTimeout, put_job_atom::value, record)
      .then([=](const StoreReply& reply) {
              if (!reply.ok) log_line(std::string() + "gantry: storing job " + id + " failed: " + reply.error);
              if (!learner || !reply.ok) return ended();
              // A learner's checkpoint goes only once its end is recorded: dropped before, a crash
              // in between would rerun the job from nothing and store a second policy version.
              // (Not recorded: the next open of the store drops it, as for every ended job.)
              self->request(self->state.store, kStoreTimeout, drop_checkpoint_atom::value, id)
                  .then([=](const StoreReply& dropped) {
                          if (!dropped.ok) log_line("gantry: job " + id + ": its checkpoint was not dropped: " + dropped.error);
                          ended();
                        },
                        [=](const caf::error& e) {
                          log_line("gantry: job " + id + ": its checkpoint was not dropped: " + error_text(self->system(), e));
                          ended();
                        });
            },
            [=](const caf::error& e) {
              log_line(std::string() + "gantry: storing job " + id + " failed: " + error_text(self->system(), e));
              ended();
            });
}

// The outcome of a job that ended without a tuner's result (it failed to start, or was cancelled
// while queued).
TuneOutcome outcome_without_run(const Job& job, JobState state, const std::string& why) {
  TuneOutcome outcome;
  outcome.job_id = job.id;
  outcome.state = state;
  outcome.stop_reason = why;
  outcome.graph = job.record.graph;
  outcome.runtime = job.record.cluster;
  return outcome;
}

// The submitter's hooks, and a copy of the job's figures to the coordinator, which shows them in
// `jobs` while the job runs (its stored record changes only when it ends).
JobHooks live_hooks(Self self, const std::string& id, const JobHooks& submitter) {
  JobHooks hooks = submitter;
  const caf::actor coordinator = caf::actor_cast<caf::actor>(self);
  hooks.on_progress = [=, user = submitter.on_progress](const TuneProgress& p) {
    if (user) user(p);
    caf::anon_send(coordinator, progress_atom::value, id, p.evaluations, p.best_makespan, std::string());
  };
  hooks.on_learning = [=, user = submitter.on_learning](Stage stage, const CurvePoint& p) {
    if (user) user(stage, p);
    char line[160];
    std::snprintf(line, sizeof line, "%s: mean %.3fx, best %.3fx the cp teacher, %.0f episodes/s", to_string(stage),
                  p.mean_ratio, p.best_ratio, p.episodes_per_second);
    caf::anon_send(coordinator, progress_atom::value, id, p.episodes, 0.0, std::string(line));
  };
  hooks.on_status = [=, user = submitter.on_status](const std::string& line) {
    if (user) user(line);
    caf::anon_send(coordinator, progress_atom::value, id, -1L, 0.0, line);  // -1: its figures stay
  };
  hooks.on_pipeline_progress = [=, user = submitter.on_pipeline_progress](const PipelineTuneProgress& p) {
    if (user) user(p);
    char line[160];
    std::snprintf(line, sizeof line, "pass %d %s%s: iteration %.6g s, bubble %.1f%%", p.pass, p.phase.c_str(),
                  p.running ? "..." : "",
                  p.iteration_time, 100 * p.bubble_ratio);
    caf::anon_send(coordinator, progress_atom::value, id, static_cast<long>(p.evaluations), p.iteration_time,
                   std::string(line));
  };
  return hooks;
}

BlockingJobContext job_context(const Job& job, const TunerConfig& tuner) {
  BlockingJobContext c;
  c.spec = job.spec;
  c.job_id = job.id;
  c.hooks = tuner.hooks;
  c.store = tuner.store;
  c.pool = tuner.pool;
  c.stop = job.stop;
  return c;
}

PipelineJobConfig pipeline_config(const Job& job, const TunerConfig& tuner) {
  PipelineJobConfig c{job_context(job, tuner), nullptr};
  c.problem = job.problem;
  return c;
}

LearnerConfig learner_config(Self self, const Job& job, const TunerConfig& tuner) {
  LearnerConfig c{job_context(job, tuner), nullptr, 1};
  c.cache = self->state.options.cache;
  c.first_sequence = tuner.resume.next_sequence;  // a rerun numbers its batches after the stored ones
  c.shutdown = job.shutdown;
  c.checkpoints = job.durable;  // stored with its spec, rerun after a restart
  return c;
}

MeasureJobConfig measure_config(const Job& job, const TunerConfig& tuner) {
  MeasureJobConfig c{job_context(job, tuner), nullptr};
  c.problem = job.problem;
  return c;
}

caf::actor spawn_job_runner(Self self, const Job& job, const TunerConfig& config) {
  if (job.spec.kind == "measure") return spawn_measure_job(self->system(), measure_config(job, config));
  if (job.spec.kind == "train") return spawn_learner(self->system(), learner_config(self, job, config));
  if (job.spec.kind == "pipeline") return spawn_pipeline_tuner(self->system(), pipeline_config(job, config));
  return spawn_tuner(self->system(), config);
}

void run_job(Self self, Job job) {
  CoordinatorState& s = self->state;
  const std::string id = job.id;
  job.record.state = JobState::running;
  if (!job.resume.active) job.record.started = unix_now();  // a resumed job keeps its first start
  TunerConfig config;
  config.problem = job.problem;
  config.spec = job.spec;
  config.hooks = live_hooks(self, id, job.hooks);
  config.job_id = id;
  config.graph = job.record.graph;
  config.runtime = job.record.cluster;
  config.store = s.store;
  config.pool = s.pool;
  config.timers = s.options.timers;
  config.resume = job.resume;
  config.record_episodes = !job.background();
  self->send(s.pool, add_problem_atom::value, job.problem->spec);
  const std::string graph_json = job.problem->spec.graph_json;
  const std::string cluster_yaml = job.problem->spec.is_pipeline() ? std::string() : job.problem->cluster.to_yaml();
  const JobRecord record = job.record;
  s.running.emplace(id, std::move(job));
  auto fail = [=](const std::string& why) {
    auto it = self->state.running.find(id);
    if (it != self->state.running.end()) close_job(self, id, outcome_without_run(it->second, JobState::failed, why));
  };
  const auto store_failed = [=](const caf::error& e) { fail("the store failed: " + error_text(self->system(), e)); };
  const auto record_and_start = [=] {
    self->request(self->state.store, kStoreTimeout, put_job_atom::value, record).then([=](const StoreReply& reply) {
      if (!reply.ok) return fail("cannot record the job: " + reply.error);
      auto it = self->state.running.find(id);
      if (it == self->state.running.end()) return;  // cancelled meanwhile
      it->second.tuner = spawn_job_runner(self, it->second, config);
      self->request(it->second.tuner, caf::infinite, start_atom::value)
          .then([=](const TuneOutcome& outcome) { close_job(self, id, outcome); },
                [=](const caf::error& e) { fail("the tuner failed: " + error_text(self->system(), e)); });
      if (it->second.cancelled) self->send(it->second.tuner, cancel_atom::value);
    }, store_failed);
  };
  // A placement's best is stored with its graph and cluster (re-simulated later); a pipeline
  // best carries its scheme and candidate, and the job record its problem.
  if (config.spec.kind == "pipeline") return record_and_start();
  self->request(s.store, kStoreTimeout, put_content_atom::value, record.graph, graph_json, record.cluster, cluster_yaml)
      .then([=](const StoreReply& content) {
        if (!content.ok) return fail("cannot store the job's graph and cluster: " + content.error);
        record_and_start();
      }, store_failed);
}

void start_next(Self self) {
  CoordinatorState& s = self->state;
  while (!s.queue.empty() && static_cast<int>(s.running.size()) < s.options.max_running) {
    Job job = std::move(s.queue.front());
    s.queue.pop_front();
    run_job(self, std::move(job));
  }
}

Status check_spec(const JobSpec& spec) {
  if (spec.kind != "tune" && spec.kind != "train" && spec.kind != "pipeline" && spec.kind != "measure")
    return make_error("job kind \"" + spec.kind + "\": this coordinator runs \"tune\", \"train\", \"pipeline\" and \"measure\" jobs");
  if (spec.kind == "measure")
    if (Status ok = check_measure_job_spec(spec); !ok) return ok;
  if (spec.kind == "train")
    if (Status ok = check_train_spec(spec); !ok) return ok;
  if (spec.kind == "pipeline")
    if (Status ok = check_pipeline_job_spec(spec); !ok) return ok;
  if (spec.kind != "pipeline" && spec.problem.is_pipeline())
    return make_error("a " + spec.kind + " job needs a graph problem, not a pipeline problem");
  if (spec.budget_seconds < 0) return make_error("budget_seconds " + std::to_string(spec.budget_seconds) + ": must be >= 0");
  if (spec.budget_evaluations < 0) return make_error("budget_evaluations must be >= 0");
  if (spec.batch_seconds <= 0 && spec.batch_evaluations <= 0) return make_error("a batch needs batch_seconds > 0 or batch_evaluations > 0");
  if (spec.parallelism < 0) return make_error("parallelism must be >= 0");
  return Ok{};
}

void cancel(Self self, const std::string& id, const CancelAnswer& answer);

// Queues a job: priority first, then submission order. A client's job stops a background run: the
// cluster is the clients' (the run's improvements are stored as they come).
void enqueue(Self self, Job job) {
  CoordinatorState& s = self->state;
  if (!job.background()) s.clients_last_seen = unix_now();
  if (!job.background() && !s.improving_id.empty()) {
    log_line("gantry: job " + job.id + " came: background run " + s.improving_id + " stops");
    cancel(self, s.improving_id, [](bool, const std::string&) {});
  }
  auto at = s.queue.begin();
  while (at != s.queue.end() && at->spec.priority >= job.spec.priority) ++at;
  s.queue.insert(at, std::move(job));
}

void reply_via(Self self, const caf::actor& gateway, const std::string& peer, const wire::Reply& r) {
  self->send(gateway, net_out_atom::value, wire::Envelope{peer, wire::Type::reply, wire::encode(r)});
}

// Answers the client whose request is being handled (its gateway sent it).
void reply(Self self, const std::string& peer, const wire::Reply& r) {
  reply_via(self, caf::actor_cast<caf::actor>(self->current_sender()), peer, r);
}

// What a job needs before it is queued: its spec checked and its problem built. Building parses
// the graph and prices it (20-30 s for a million ops here), so it runs off the coordinator's thread
// (`off_thread`); nothing here touches the coordinator's state (the cache has its own lock).
struct PreparedJob {
  JobSpec spec;
  std::shared_ptr<const BuiltProblem> problem;
  std::string spec_text;  // a durable job's spec as the store keeps it (the graph's content within)
};

Result<PreparedJob> prepare_job(JobSpec spec, ProblemCache* cache, bool durable, const std::function<void()>& before_build) {
  if (auto ok = check_spec(spec); !ok) return ok.error();
  if (before_build) before_build();
  auto built = cache ? cache->build(spec.problem) : build_problem(spec.problem);
  if (!built) return built.error();
  std::string text = durable ? wire::job_spec_text(spec) : std::string();
  return PreparedJob{std::move(spec), built.value(), std::move(text)};
}

// The job with its id and QUEUED record. A durable job (from a client) has its spec's text: the
// store keeps it and a restarted coordinator runs it on; an embedded job ends with its process.
Job make_job(Self self, PreparedJob prepared, JobHooks hooks) {
  CoordinatorState& s = self->state;
  Job job;
  job.id = new_job_id();
  job.spec = std::move(prepared.spec);
  job.hooks = std::move(hooks);
  job.problem = std::move(prepared.problem);
  job.order = s.next_order++;
  JobRecord& r = job.record;
  r.id = job.id;
  r.kind = job.spec.kind;
  r.state = JobState::queued;
  if (const PipelineSource* pipeline = job.problem->pipeline.get()) {  // where its best is stored
    r.graph = pipeline->problem;
    r.cluster = pipeline->runtime;
    r.graph_label = "pipeline: " + pipeline->problem_label + ", " + std::to_string(pipeline->microbatches) + " microbatches";
    r.cluster_name = pipeline->cluster_name.empty() ? "(stage costs)" : pipeline->cluster_name;
  } else {
    r.graph = fingerprint(job.problem->graph);
    r.cluster = job.problem->runtime;
    r.graph_label = job.problem->spec.graph_label;
    r.cluster_name = job.problem->cluster.name();
  }
  r.started = unix_now();
  r.owner_pid = static_cast<long>(getpid());
  r.owner_host = host_name();
  job.durable = !prepared.spec_text.empty();
  r.spec = std::move(prepared.spec_text);
  return job;
}

void admit(Self self, Job job) {
  enqueue(self, std::move(job));
  start_next(self);
}

// An embedded job (its process follows it and ends with it): its record is stored on the way;
// `promise` gets its id, or why it was refused.
void submit_embedded(Self self, JobSpec spec, JobHooks hooks, caf::response_promise promise) {
  ProblemCache* cache = self->state.options.cache;
  const auto hook = self->state.options.before_build;
  ++self->state.submits_preparing;
  off_thread<PreparedJob>(self, [spec = std::move(spec), cache, hook]() mutable { return prepare_job(std::move(spec), cache, false, hook); },
                          [=](Result<PreparedJob> prepared) mutable {
                            --self->state.submits_preparing;
                            if (!prepared) return promise.deliver(caf::make_error(caf::sec::invalid_argument, prepared.error().message));
                            Job job = make_job(self, std::move(prepared).value(), hooks);
                            put_job(self, job.record);
                            const std::string id = job.id;
                            admit(self, std::move(job));
                            promise.deliver(id);
                          });
}

// The cancels that came while the job's QUEUED record was being written; it no longer is.
std::vector<CancelAnswer> take_recording(Self self, const std::string& id) {
  auto& recording = self->state.recording;
  auto it = recording.find(id);
  if (it == recording.end()) return {};
  std::vector<CancelAnswer> cancels = std::move(it->second);
  recording.erase(it);
  return cancels;
}

// A job cancelled before it started: its record says so, its waiters hear it, and `cancels` are
// answered once the record is stored.
void cancel_unstarted(Self self, const Job& job, std::vector<CancelAnswer> cancels) {
  const std::string why = "cancelled before it started";
  JobRecord record = job.record;
  record.state = JobState::cancelled;
  record.finished = unix_now();
  record.message = record_message(job, why);
  const std::string id = job.id;
  put_job(self, record, [id, cancels](const std::string& error) {
    const std::string text = "job " + id + " cancelled (it had not started)" +
                             (error.empty() ? "" : "; its record was not stored (" + error + "): a restart would run it");
    for (const CancelAnswer& answer : cancels) answer(true, text);
  });
  job_ended(self, job.id, outcome_without_run(job, JobState::cancelled, why));
}

// A client's job is acknowledged only once its QUEUED record is synced: acknowledged before, a
// crash in between lost a job its client had been told was accepted. A job the store cannot
// record is refused, not run (it would not survive a restart, and `jobs` would not list it). A
// submit whose key has a recorded job is answered with that job and runs nothing (the client sent
// it again because no reply came); one that comes while the first is being prepared or recorded
// gets the first one's answer, its job or its refusal (after a refusal the key makes a new try).
void submit_durable(Self self, const caf::actor& gateway, const std::string& peer, const wire::Request& request) {
  CoordinatorState& s = self->state;
  const std::uint64_t rid = request.id;
  const std::string key = request.key;
  const auto answer = [=](const wire::Reply& r) { reply_via(self, gateway, peer, wire::Reply{rid, r.ok, r.error, r.data}); };
  if (key.size() > 64) return answer(wire::Reply{rid, false, "a submit key has at most 64 characters", ""});
  if (!key.empty()) {
    if (!s.keys_read) {
      s.before_keys.emplace_back(gateway, peer, request);
      return;
    }
    if (auto done = s.submitted.find(key); done != s.submitted.end())
      return answer(wire::Reply{rid, true, "", json_text(nlohmann::json{{"job", done->second}})});
    if (auto busy = s.submitting.find(key); busy != s.submitting.end()) return busy->second.push_back(answer);
    s.submitting[key];
  }
  // This submit's answer, and the same to its retries that came while it was being recorded.
  const auto settle = [=](const wire::Reply& r, const std::string& job) {
    answer(r);
    if (key.empty()) return;
    CoordinatorState& st = self->state;
    if (!job.empty()) st.submitted[key] = job;
    auto waiting = st.submitting.find(key);
    if (waiting == st.submitting.end()) return;
    const auto retries = std::move(waiting->second);
    st.submitting.erase(waiting);
    for (const auto& retry : retries) retry(r);
  };
  ProblemCache* cache = s.options.cache;
  const auto hook = s.options.before_build;
  const auto refuse = [=](const std::string& why) { settle(wire::Reply{rid, false, why, ""}, ""); };
  const auto refused = [=](const std::vector<CancelAnswer>& cancels, const std::string& why) {  // nothing to cancel
    for (const CancelAnswer& cancel_answer : cancels) cancel_answer(true, why);
    refuse(why);
  };
  ++s.submits_preparing;
  off_thread<PreparedJob>(self, [spec = request.spec, cache, hook]() mutable { return prepare_job(std::move(spec), cache, true, hook); },
                          [=](Result<PreparedJob> prepared) {
    --self->state.submits_preparing;
    if (!prepared) return refuse(prepared.error().message);
    auto job = std::make_shared<Job>(make_job(self, std::move(prepared).value(), {}));
    job->record.submit_key = key;
    self->state.recording[job->id];  // no cancel yet
    // No timeout: the store actor answers (a timeout would tell the client "refused" while the
    // store may still record the job, which a restart would then run).
    self->request(self->state.store, caf::infinite, put_job_atom::value, job->record)
        .then([=](const StoreReply& stored) {
                std::vector<CancelAnswer> cancels = take_recording(self, job->id);
                if (!stored.ok) return refused(cancels, "job not accepted: recording it failed: " + stored.error);
                job->record.spec.clear();  // stored
                const std::string id = job->id;
                if (!cancels.empty()) cancel_unstarted(self, *job, std::move(cancels));
                else admit(self, std::move(*job));
                settle(wire::Reply{rid, true, "", json_text(nlohmann::json{{"job", id}})}, id);
              },
              [=](const caf::error& e) {
                refused(take_recording(self, job->id), "job not accepted: recording it failed: " + error_text(self->system(), e));
              });
  });
}

// The submit keys of the stored jobs, read once at start; the keyed submits that came meanwhile
// then go on. A store that cannot list its jobs leaves the keys of this run only.
void read_submit_keys(Self self) {
  const auto go_on = [=] {
    CoordinatorState& s = self->state;
    s.keys_read = true;
    auto waiting = std::move(s.before_keys);
    for (const auto& [gateway, peer, request] : waiting) submit_durable(self, gateway, peer, request);
  };
  // No timeout: a slow listing of a large store must not leave the stored keys unread.
  self->request(self->state.store, caf::infinite, get_jobs_atom::value, false)
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) log_line("gantry: cannot read the stored jobs' submit keys: " + stored.error);
            for (const JobRecord& record : stored.jobs)
              if (!record.submit_key.empty()) self->state.submitted[record.submit_key] = record.id;
            go_on();
          },
          [=](const caf::error& e) {
            log_line("gantry: cannot read the stored jobs' submit keys: " + error_text(self->system(), e));
            go_on();
          });
}

// Queues an interrupted job again, to go on from its stored episodes and best.
void resume(Self self, const JobRecord& record, const PreparedJob& prepared) {
  const JobSpec spec = prepared.spec;
  const auto problem = prepared.problem;
  self->request(self->state.store, kStoreTimeout, tally_atom::value, record.id)
      .then([=](const EpisodeTally& tally) {
        if (!tally.error.empty()) return log_line("gantry: job " + record.id + " cannot be resumed: " + tally.error);
        Job job;
        job.id = record.id;
        job.spec = spec;
        job.problem = problem;
        job.order = self->state.next_order++;
        job.record = record;
        job.record.spec.clear();  // it stays stored
        job.durable = true;
        job.record.state = JobState::queued;
        job.record.owner_pid = static_cast<long>(getpid());
        job.record.owner_host = host_name();
        job.record.message = "resumed after a coordinator restart";
        job.resume.active = tally.episodes > 0;
        job.resume.evaluations = tally.evaluations;
        job.resume.next_sequence = tally.last_sequence + 1;
        job.resume.seconds = record.started > 0 && tally.last_time > record.started ? tally.last_time - record.started : 0;
        log_line("gantry: job " + record.id +
                 (spec.kind == "train"      ? " run again from its spec (from its checkpoint, if it left one)"
                  : spec.kind == "pipeline" ? " run again from its spec, from its stored best"
                                            : " resumed (" + std::to_string(tally.evaluations) + " evaluations done before)"));
        put_job(self, job.record);
        enqueue(self, std::move(job));
        start_next(self);
      },
      [=](const caf::error& e) {
        log_line("gantry: job " + record.id + " cannot be resumed: the store did not answer: " + error_text(self->system(), e));
      });
}

// The interrupted jobs' problems, built in their stored order (off the coordinator's thread).
using Recovered = std::vector<std::pair<JobRecord, Result<PreparedJob>>>;
Result<Recovered> rebuild(const std::vector<JobRecord>& records, ProblemCache* cache) {
  Recovered out;
  for (const JobRecord& record : records) {
    auto spec = wire::parse_job_spec_text(record.spec);
    if (!spec) out.emplace_back(record, spec.error());
    else out.emplace_back(record, prepare_job(std::move(spec).value(), cache, /*durable=*/false, {}));  // its spec is stored
  }
  return out;
}

// After a restart: the jobs the previous coordinator was running or had queued (the store marked
// them INTERRUPTED when this one opened it) go back to the queue, each to go on from its stored
// episodes and best.
void recover(Self self) {
  ++self->state.recovering;  // the cluster is not idle while they are rebuilt (background improvement)
  const auto done = [=](const std::string& error) {
    --self->state.recovering;
    if (!error.empty()) log_line(error);
  };
  self->request(self->state.store, kStoreTimeout, get_jobs_atom::value, true).then([=](const StoredJobs& stored) {
    if (!stored.error.empty()) return done("gantry: cannot read the stored jobs, none resumed: " + stored.error);
    std::vector<JobRecord> interrupted;
    for (const JobRecord& record : stored.jobs)
      if (record.state == JobState::interrupted && !record.spec.empty()) interrupted.push_back(record);
    if (interrupted.empty()) return done("");
    ProblemCache* cache = self->state.options.cache;
    off_thread<Recovered>(self, [interrupted, cache] { return rebuild(interrupted, cache); }, [=](Result<Recovered> recovered) {
      if (!recovered) return done("gantry: no job resumed: " + recovered.error().message);
      for (const auto& [record, prepared] : recovered.value()) {
        if (!prepared) log_line("gantry: job " + record.id + " cannot be resumed: " + prepared.error().message);
        else resume(self, record, prepared.value());
      }
      done("");
    });
  },
  [=](const caf::error& e) {
    done("gantry: cannot read the stored jobs, none resumed: the store did not answer: " + error_text(self->system(), e));
  });
}

// Background improvement (options.improve_seconds > 0): a tick every 2 s; once no client job has
// been queued or running for options.improve_after seconds, one stored problem is tuned again
// (actors/background_improvement.hpp), one run at a time and at most one per improve_seconds,
// while the cluster stays idle.
constexpr auto kImprovementTick = std::chrono::seconds(2);
constexpr std::size_t kImprovementTries = 20;  // stored jobs asked for their spec per attempt

bool clients_busy(const CoordinatorState& s) {
  const auto client = [](const Job& j) { return !j.background(); };
  return s.submits_preparing > 0 || s.recovering > 0 || !s.recording.empty() || !s.before_keys.empty() ||
         std::any_of(s.queue.begin(), s.queue.end(), client) ||
         std::any_of(s.running.begin(), s.running.end(), [&](const auto& entry) { return client(entry.second); });
}

// Keeps the newest options.improve_keep background runs of a problem in the store: an idle
// cluster makes one per --improve duration, for months.
void drop_old_background_runs(Self self, const Fingerprint& graph, const Fingerprint& runtime) {
  const auto failed = [=](const std::string& why) { log_line("gantry: old background runs not dropped: " + why); };
  self->request(self->state.store, kStoreTimeout, get_jobs_atom::value, false)
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) return failed(stored.error);
            std::vector<std::string> old = background_runs_beyond(
                stored.jobs, graph, runtime, static_cast<std::size_t>(self->state.options.improve_keep));
            if (old.empty()) return;
            self->request(self->state.store, kStoreTimeout, drop_jobs_atom::value, std::move(old))
                .then([=](const StoreReply& reply) { if (!reply.ok) failed(reply.error); },
                      [=](const caf::error& e) { failed(error_text(self->system(), e)); });
          },
          [=](const caf::error& e) { failed(error_text(self->system(), e)); });
}

// No run started: another try after another idle stretch (quietly when there was nothing to run).
void improvement_not_started(Self self, const std::string& why) {
  if (!why.empty()) log_line("gantry: no background improvement: " + why);
  self->state.improving = false;
  self->state.clients_last_seen = unix_now();
}

void improve_from(Self self, const std::vector<std::string>& ids, std::size_t i, std::size_t asked);

// Job ids[i] cannot run again (no stored spec, one that does not read, is not a tuning job or
// fails its checks): noted, with why when there is more to say than that it has no stored spec,
// and the next one tried.
void skip_source(Self self, const std::vector<std::string>& ids, std::size_t i, std::size_t asked, const std::string& why) {
  if (!why.empty()) log_line("gantry: background improvement skips job " + ids[i] + ": " + why);
  self->state.unfit_sources.insert(ids[i]);
  improve_from(self, ids, i + 1, asked);
}

// Job ids[i] did not start for a reason that may pass (the store, a thread, the problem's build):
// no run this time; the third such failure makes it unfit, so that it cannot hold the turns.
void source_failed(Self self, const std::string& id, const std::string& why) {
  CoordinatorState& s = self->state;
  if (++s.source_failures[id] >= 3) {
    s.unfit_sources.insert(id);
    s.source_failures.erase(id);
    return improvement_not_started(self, "job " + id + ": " + why + " (the third time: it is skipped from now on)");
  }
  improvement_not_started(self, "job " + id + ": " + why);
}

void start_improvement(Self self, JobSpec spec, const std::vector<std::string>& ids, std::size_t i, std::size_t asked) {
  CoordinatorState& s = self->state;
  const std::string source = ids[i];
  spec.budget_seconds = s.options.improve_seconds;
  spec.budget_evaluations = 0;
  spec.patience_seconds = 0;
  spec.priority = std::numeric_limits<int>::min();
  // Each run searches on from the same best another way (runs start seconds apart), also after a restart.
  spec.seed += static_cast<std::uint64_t>(unix_now() * 1000);
  spec.fail_batch = -1;
  if (Status ok = check_spec(spec); !ok) return skip_source(self, ids, i, asked, "its spec: " + ok.error().message);
  ProblemCache* cache = s.options.cache;
  // Not durable: the run stores no copy of its spec (its source job keeps one), and a restart
  // does not resume it (the next idle stretch starts another).
  off_thread<PreparedJob>(self, [spec = std::move(spec), cache]() mutable { return prepare_job(std::move(spec), cache, false, {}); },
                          [=](Result<PreparedJob> prepared) {
    if (!prepared) return source_failed(self, source, prepared.error().message);
    CoordinatorState& st = self->state;
    // A client's job came meanwhile (it may even have ended: the idle time starts again).
    if (clients_busy(st) || unix_now() - st.clients_last_seen < st.options.improve_after)
      return improvement_not_started(self, "");
    self->state.source_failures.erase(source);
    Job job = make_job(self, std::move(prepared).value(), {});
    job.background_of = source;
    // As a resumed job: the heuristics' result is in the stored best, so the whole budget searches
    // on from it (a job without a usable stored best runs them).
    job.resume.active = true;
    job.record.improves = source;
    job.record.message = record_message(job, "");
    self->state.improving_id = job.id;
    self->state.improvement_started = unix_now();
    log_line("gantry: job " + job.id + ": " + job.record.message + " (" + job.record.graph_label + " on " +
             job.record.cluster_name + ", " + std::to_string(static_cast<long>(job.spec.budget_seconds)) +
             " s from its stored best; a submitted job stops it)");
    put_job(self, job.record);
    admit(self, std::move(job));
  });
}

// The first of ids[i..] that can run again (at most kImprovementTries store reads per attempt;
// the unfit are remembered, so the next attempt goes further).
void improve_from(Self self, const std::vector<std::string>& ids, std::size_t i, std::size_t asked) {
  const auto& unfit = self->state.unfit_sources;
  while (i < ids.size() && unfit.count(ids[i]) > 0) ++i;
  if (i >= ids.size() || asked >= kImprovementTries) return improvement_not_started(self, "");
  self->request(self->state.store, kStoreTimeout, get_job_atom::value, ids[i])
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) return source_failed(self, ids[i], stored.error);
            if (stored.jobs.empty() || stored.jobs.front().spec.empty()) return skip_source(self, ids, i, asked + 1, "");
            auto spec = wire::parse_job_spec_text(stored.jobs.front().spec);
            if (!spec) return skip_source(self, ids, i, asked + 1, "its spec: " + spec.error().message);
            if (spec.value().kind != "tune" && spec.value().kind != "pipeline")
              return skip_source(self, ids, i, asked + 1, "its spec is a " + spec.value().kind + " job");
            const JobRecord& source = stored.jobs.front();
            self->request(self->state.store, kStoreTimeout, get_best_atom::value, source.graph, source.cluster)
                .then(
                    [=, spec = std::move(spec).value()](const StoredBest& best) mutable {
                      if (!best.error.empty()) return source_failed(self, ids[i], best.error);
                      if (best.found && at_lower_bound(best.record))
                        return skip_source(self, ids, i, asked + 1, "its problem's stored best is at its lower bound");
                      start_improvement(self, std::move(spec), ids, i, asked + 1);
                    },
                    [=](const caf::error& e) { improvement_not_started(self, "the store did not answer: " + error_text(self->system(), e)); });
          },
          [=](const caf::error& e) { improvement_not_started(self, "the store did not answer: " + error_text(self->system(), e)); });
}

void improvement_tick(Self self) {
  CoordinatorState& s = self->state;
  self->delayed_send(self, kImprovementTick, improve_atom::value);
  const double now = unix_now();
  if (clients_busy(s)) s.clients_last_seen = now;
  // One run per duration at most: a search that converges early (a pipeline tune often does) must
  // not turn an idle cluster into a job record every tick.
  if (s.improving || now - s.clients_last_seen < s.options.improve_after ||
      now - s.improvement_started < s.options.improve_seconds)
    return;
  s.improving = true;
  self->request(s.store, kStoreTimeout, get_jobs_atom::value, false)
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) return improvement_not_started(self, "cannot list the stored jobs: " + stored.error);
            improve_from(self, improvement_order(stored.jobs), 0, 0);
          },
          [=](const caf::error& e) { improvement_not_started(self, "the store did not answer: " + error_text(self->system(), e)); });
}

void cancel(Self self, const std::string& id, const CancelAnswer& answer) {
  CoordinatorState& s = self->state;
  for (auto it = s.queue.begin(); it != s.queue.end(); ++it) {
    if (it->id != id) continue;
    const Job job = std::move(*it);
    s.queue.erase(it);
    return cancel_unstarted(self, job, {answer});
  }
  if (auto recording = s.recording.find(id); recording != s.recording.end())  // listed, not yet queued
    return recording->second.push_back(answer);
  auto running = s.running.find(id);
  if (running != s.running.end()) {
    running->second.cancelled = true;
    running->second.stop->store(true);
    if (running->second.tuner) self->send(running->second.tuner, cancel_atom::value);
    return answer(true, "job " + id + " is stopping; its best so far is kept");
  }
  if (s.closing.count(id) > 0) return answer(true, "job " + id + " is ending (its end is being recorded)");
  auto ended = s.ended.find(id);
  if (ended != s.ended.end()) return answer(true, std::string("job ") + id + " already ended " + to_string(ended->second.state));
  answer(false, "no job " + id + " in this coordinator");
}

// Asks a local actor (the store, the pool) on behalf of a client and replies with what `answer`
// makes of its answer, or with its error. No timeout: local actors answer, the client has its own
// deadline, and a CAF 0.17 request timeout is a clock entry that lives its whole length even after
// the answer came (at 20,000 queries a second, 10 s timeouts held 200,000 of them: 25 MB).
template <class Value, class Answer, class... Message>
void ask_local(Self self, const caf::actor& whom, const std::string& peer, std::uint64_t id, Answer answer,
               Message&&... message) {
  caf::actor gateway = caf::actor_cast<caf::actor>(self->current_sender());
  self->request(whom, caf::infinite, std::forward<Message>(message)...)
      .then([=](const Value& value) { reply_via(self, gateway, peer, answer(value)); },
            [=](const caf::error& e) { reply_via(self, gateway, peer, wire::Reply{id, false, error_text(self->system(), e), ""}); });
}

nlohmann::json status_json(Self self, const PoolStatus& pool, const GatewayCounters& gateway) {
  CoordinatorState& s = self->state;
  nlohmann::json workers = nlohmann::json::array();
  for (const auto& w : pool.workers)
    workers.push_back({{"name", w.name}, {"host", w.host}, {"pid", w.pid}, {"slots", w.slots}, {"busy", w.busy}, {"done", w.done},
                       {"busy_seconds", w.busy_seconds}, {"silent_seconds", w.silent_seconds}, {"executors", w.executors}});
  nlohmann::json queued = nlohmann::json::array(), running = nlohmann::json::array();
  for (const Job& j : s.queue) {  // the head of the queue: a status stays cheap with thousands queued
    if (queued.size() >= 20) break;
    queued.push_back({{"id", j.id}, {"graph", j.record.graph_label}, {"priority", j.spec.priority}});
  }
  for (const auto& [id, j] : s.running) running.push_back({{"id", id}, {"graph", j.record.graph_label}, {"priority", j.spec.priority}});
  return {{"workers", workers}, {"slots", pool.slots()}, {"leases", pool.leased}, {"queued_tasks", pool.queued},
          {"committed", pool.committed}, {"requeued", pool.requeued}, {"stale_results", pool.stale},
          {"malformed", pool.malformed + s.malformed + gateway.malformed}, {"refused", gateway.refused}, {"dropped_sends", gateway.dropped_sends},
          {"jobs_queued", queued}, {"queue_length", s.queue.size()}, {"jobs_running", running},
          {"submit_keys", s.options.submit_keys},  // a client resends a keyed submit only where it is true
          {"improve_seconds", s.options.improve_seconds}, {"background_run", s.improving_id}};
}

void on_client(Self self, const wire::Envelope& e) {
  CoordinatorState& s = self->state;
  const std::string peer = e.peer;
  auto request = wire::decode<wire::Request>(e.payload);
  if (!request) {
    ++s.malformed;
    log_line(std::string() + "gantry: dropped a " + wire::to_string(e.type) + " request from " + peer + ": " + request.error().message);
    return reply(self, peer, wire::Reply{0, false, request.error().message, ""});
  }
  const wire::Request& r = request.value();
  switch (e.type) {
    case wire::Type::submit: {
      return submit_durable(self, caf::actor_cast<caf::actor>(self->current_sender()), peer, r);
    }
    case wire::Type::cancel: {
      const caf::actor gateway = caf::actor_cast<caf::actor>(self->current_sender());
      const std::uint64_t rid = r.id;
      return cancel(self, r.job, [=](bool known, const std::string& text) {
        reply_via(self, gateway, peer, wire::Reply{rid, known, known ? "" : text, known ? json_text(nlohmann::json{{"message", text}}) : ""});
      });
    }
    case wire::Type::jobs: {
      const std::uint64_t id = r.id;
      const std::string only = r.job;
      ask_local<StoredJobs>(self, s.store, peer, id, [=](const StoredJobs& jobs) {
        wire::Reply answer{id, jobs.error.empty(), jobs.error, ""};
        std::vector<JobRecord> list;
        for (const JobRecord& j : jobs.jobs) {
          if (!only.empty() && j.id != only) continue;
          auto live = self->state.running.find(j.id);  // a running job's figures as they are now
          list.push_back(live != self->state.running.end() && j.state == JobState::running ? live->second.record : j);
        }
        if (!only.empty() && list.empty() && jobs.error.empty()) answer = wire::Reply{id, false, "no job " + only, ""};
        else answer.data = wire::job_records_json(list);
        return answer;
      }, get_jobs_atom::value, false);  // a listing: the records without their specs
      return;
    }
    case wire::Type::query: {
      const std::uint64_t id = r.id;
      if (r.what == "best") {  // data: the record, or null when there is none
        ask_local<StoredBest>(self, s.store, peer, id, [=](const StoredBest& best) {
          return wire::Reply{id, best.error.empty(), best.error, best.found ? wire::schedule_record_json(best.record) : "null"};
        }, get_best_atom::value, r.graph, r.runtime);
      } else if (r.what == "list") {
        ask_local<StoredBests>(self, s.store, peer, id, [=](const StoredBests& list) {
          std::vector<ScheduleRecord> listed = list.records;  // a listing, not the plans: placements stay home
          for (ScheduleRecord& record : listed) record.placement = Placement{};
          return wire::Reply{id, list.error.empty(), list.error, wire::schedule_records_json(listed)};
        }, list_best_atom::value, r.prefix);
      } else if (r.what == "history") {
        ask_local<StoredHistory>(self, s.store, peer, id, [=](const StoredHistory& history) {
          return wire::Reply{id, history.error.empty(), history.error, wire::history_records_json(history.records)};
        }, get_history_atom::value, r.graph, r.runtime);
      } else if (r.what == "policies") {
        ask_local<StoredPolicies>(self, s.store, peer, id, [=](const StoredPolicies& list) {
          return wire::Reply{id, list.error.empty(), list.error, wire::policy_records_json(list.records)};
        }, list_policies_atom::value);
      } else if (r.what == "policy") {  // data: the policy with its weights and curve, or null
        const auto answer = [=](const StoredPolicy& p) {
          return wire::Reply{id, p.error.empty(), p.error, p.found ? wire::policy_record_json(p.record) : "null"};
        };
        if (!r.job.empty()) {
          ask_local<StoredPolicy>(self, s.store, peer, id, answer, get_job_policy_atom::value, r.job);
        } else if (auto ref = parse_policy_ref(r.policy); !ref) {
          reply(self, peer, wire::Reply{id, false, ref.error().message, ""});
        } else {
          ask_local<StoredPolicy>(self, s.store, peer, id, answer, get_policy_atom::value, ref.value().name, ref.value().version);
        }
      } else {
        reply(self, peer, wire::Reply{id, false, "query '" + r.what + "': expected best, list, history, policies or policy", ""});
      }
      return;
    }
    case wire::Type::status: {
      caf::actor gateway = caf::actor_cast<caf::actor>(self->current_sender());
      const std::uint64_t id = r.id;
      // The pool's view, then the gateway's counters (both local and quick: no timeouts, as above).
      self->request(s.pool, caf::infinite, status_atom::value).then([=](const PoolStatus& pool) {
        const auto answer_with = [=](const GatewayCounters& counters) {
          reply_via(self, gateway, peer, wire::Reply{id, true, "", json_text(status_json(self, pool, counters))});
        };
        self->request(gateway, caf::infinite, status_atom::value)
            .then([=](const GatewayCounters& counters) { answer_with(counters); },
                  [=](const caf::error&) { answer_with(GatewayCounters{}); });
      },
      [=](const caf::error& e) { reply_via(self, gateway, peer, wire::Reply{id, false, error_text(self->system(), e), ""}); });
      return;
    }
    default:
      ++s.malformed;
      return reply(self, peer, wire::Reply{r.id, false, std::string("not a client request: ") + wire::to_string(e.type), ""});
  }
}

caf::behavior coordinator(Self self, caf::actor store, caf::actor pool, CoordinatorOptions options) {
  CoordinatorState& s = self->state;
  s.options = options;
  s.store = std::move(store);
  s.pool = std::move(pool);
  self->set_exit_handler([=](const caf::exit_msg& msg) {  // shutdown: the running jobs' tuners go too
    for (auto& [id, job] : self->state.running) {
      job.shutdown->store(true);  // before stop: a learner that sees stop checks it
      job.stop->store(true);      // a learner in training reads its exit only after it stops
      if (job.tuner) self->send_exit(job.tuner, msg.reason);
    }
    self->quit(msg.reason);
  });
  if (options.submit_keys) read_submit_keys(self);
  else s.keys_read = true;  // none stored to wait for
  s.clients_last_seen = unix_now();
  if (options.improve_seconds > 0) self->send(self, improve_atom::value);
  return {
      [=](submit_atom, JobSpec spec, JobHooks hooks) -> caf::result<std::string> {
        auto promise = self->make_response_promise();
        submit_embedded(self, std::move(spec), std::move(hooks), promise);
        return promise;
      },
      [=](await_atom, const std::string& id) -> caf::result<TuneOutcome> {
        CoordinatorState& st = self->state;
        auto ended = st.ended.find(id);
        if (ended != st.ended.end()) return ended->second;
        bool known = st.running.count(id) > 0 || st.closing.count(id) > 0;
        for (const Job& j : st.queue) known = known || j.id == id;
        if (!known) return caf::make_error(caf::sec::invalid_argument, "no job " + id + " in this coordinator");
        auto promise = self->make_response_promise();
        st.waiters[id].push_back(promise);
        return promise;
      },
      [=](cancel_atom, const std::string& id) -> caf::result<std::string> {
        auto promise = self->make_response_promise();
        cancel(self, id, [promise](bool known, const std::string& text) mutable {
          if (known) promise.deliver(text);
          else promise.deliver(caf::make_error(caf::sec::invalid_argument, text));
        });
        return promise;
      },
      [=](net_in_atom, const wire::Envelope& e) { on_client(self, e); },
      [=](progress_atom, const std::string& id, long evaluations, double best, const std::string& message) {
        auto it = self->state.running.find(id);
        if (it == self->state.running.end()) return;
        JobRecord& r = it->second.record;
        if (evaluations >= 0) r.evaluations = evaluations;
        if (best > 0) r.best_makespan = best;
        // A learner's or pipeline tuner's progress line; a placement tuner has none.
        r.message = record_message(it->second, message);
      },
      [=](recover_atom) { recover(self); },
      [=](improve_atom) { improvement_tick(self); },
  };
}

}  // namespace

caf::actor spawn_coordinator(caf::actor_system& system, caf::actor store, caf::actor pool, CoordinatorOptions options) {
  return system.spawn(coordinator, std::move(store), std::move(pool), options);
}

}  // namespace gantry
