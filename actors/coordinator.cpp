#include "actors/coordinator.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include "actors/background_improvement.hpp"
#include "actors/coordinator_state.hpp"
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
#include "core/text.hpp"
#include "core/unix_time.hpp"
#include "storage/store.hpp"

namespace gantry::coordinator_detail {

namespace {

std::string new_job_id() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  static std::atomic<int> counter{0};  // two jobs of one process in one millisecond
  char buffer[80];
  std::snprintf(buffer, sizeof buffer, "job-%lld-%d-%d", ms, static_cast<int>(getpid()), counter++);
  return buffer;
}

constexpr std::size_t kOutcomesKept = 1000;

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

}  // namespace

// Stores a job's record; `then` (when given) hears the store's error, empty once it is stored.
void put_job(Self self, const JobRecord& record, std::function<void(const std::string&)> then) {
  const auto done = [=](const std::string& error) {
    if (!error.empty()) log_line(std::string() + "gantry: storing job " + record.id + " failed: " + error);
    if (then) then(error);
  };
  self->request(self->state.store, kStoreTimeout, put_job_atom::value, record)
      .then([=](const StoreReply& reply) { done(reply.ok ? std::string() : reply.error); },
            [=](const caf::error& e) { done(error_text(self->system(), e)); });
}

// A job's record message: a background run's says it is one, and of which job.
std::string record_message(const Job& job, const std::string& text) {
  if (!job.background()) return text;
  const std::string what = std::string(kBackgroundMessage) + " of job " + job.background_of;
  return text.empty() ? what : what + ": " + text;
}

void start_next(Self self) {
  CoordinatorState& s = self->state;
  while (!s.queue.empty() && static_cast<int>(s.running.size()) < s.options.max_running) {
    Job job = std::move(s.queue.front());
    s.queue.pop_front();
    run_job(self, std::move(job));
  }
}

JobSpec stored_spec(JobSpec spec) {
  spec.batch_seconds = std::min(spec.batch_seconds, kLongestBatch);
  return spec;
}

namespace {

// The numbers every kind of job shares. A client's spec may carry any value: NaN passes every
// comparison, infinity every bound, and a count of chains or a batch no worker can finish ties up
// the pool (2^31 chains queued as many tasks; a batch of 2^62 evaluations outlived every lease).
Status check_spec_numbers(const JobSpec& spec) {
  if (!(spec.budget_seconds >= 0 && std::isfinite(spec.budget_seconds)))
    return make_error("budget_seconds " + format_seconds(spec.budget_seconds) + ": must be a finite number >= 0 (0: no time budget)");
  if (spec.budget_evaluations < 0) return make_error("budget_evaluations must be >= 0");
  if (!(spec.patience_seconds >= 0 && std::isfinite(spec.patience_seconds)))
    return make_error("patience_seconds " + format_seconds(spec.patience_seconds) + ": must be a finite number >= 0 (0: no patience)");
  if (!std::isfinite(spec.batch_seconds)) return make_error("batch_seconds " + format_seconds(spec.batch_seconds) + ": must be a finite number");
  if (spec.batch_seconds <= 0 && spec.batch_evaluations <= 0) return make_error("a batch needs batch_seconds > 0 or batch_evaluations > 0");
  if (spec.kind == "tune" && spec.batch_evaluations <= 0 && !(spec.batch_seconds <= kLongestBatch))  // timed batches
    return make_error("batch_seconds " + format_seconds(spec.batch_seconds) + ": at most " + format_seconds(kLongestBatch) +
                      " (a running batch runs to its end: it is the step of progress and of a cancel)");
  if (spec.batch_evaluations > kMostBatchEvaluations)
    return make_error("batch_evaluations " + std::to_string(spec.batch_evaluations) + ": at most " +
                      std::to_string(kMostBatchEvaluations) + " (a running batch runs to its end)");
  if (spec.parallelism < 0 || spec.parallelism > kMostParallelism)
    return make_error("parallelism " + std::to_string(spec.parallelism) + ": must be 0 (every slot) to " + std::to_string(kMostParallelism));
  return Ok{};
}

}  // namespace

Status check_spec(const JobSpec& spec) {
  if (spec.kind != "tune" && spec.kind != "train" && spec.kind != "pipeline" && spec.kind != "measure")
    return make_error("job kind \"" + spec.kind + "\": this coordinator runs \"tune\", \"train\", \"pipeline\" and \"measure\" jobs");
  if (Status ok = check_spec_numbers(spec); !ok) return ok;
  if (spec.kind == "measure")
    if (Status ok = check_measure_job_spec(spec); !ok) return ok;
  if (spec.kind == "train")
    if (Status ok = check_train_spec(spec); !ok) return ok;
  if (spec.kind == "pipeline")
    if (Status ok = check_pipeline_job_spec(spec); !ok) return ok;
  if (spec.kind != "pipeline" && spec.problem.is_pipeline())
    return make_error("a " + spec.kind + " job needs a graph problem, not a pipeline problem");
  return Ok{};
}

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

}  // namespace gantry::coordinator_detail

namespace gantry {

namespace {

using namespace coordinator_detail;

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
  read_store_at_start(self);
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
      [=](improve_atom) { improvement_tick(self); },
  };
}

}  // namespace

caf::actor spawn_coordinator(caf::actor_system& system, caf::actor store, caf::actor pool, CoordinatorOptions options) {
  return system.spawn(coordinator, std::move(store), std::move(pool), options);
}

}  // namespace gantry
