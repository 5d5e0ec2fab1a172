#pragma once
// The coordinator's state and the functions its files share (internal to actors/coordinator*.cpp):
//   coordinator.cpp              the actor: its jobs from submit to end (queue, run, cancel, record)
//   coordinator_clients.cpp      client requests over the wire (submit, cancel, jobs, query, status)
//   coordinator_recovery.cpp     after a restart: the stored submit keys and the interrupted jobs
//   coordinator_improvement.cpp  background improvement's runs (which one: background_improvement.hpp)
#include <caf/all.hpp>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "actors/coordinator.hpp"
#include "actors/messages.hpp"
#include "actors/problem_spec.hpp"
#include "actors/rate_limited_log.hpp"
#include "actors/tuner_actor.hpp"

namespace gantry::coordinator_detail {

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
  RateLimitedLog malformed_log;                 // their lines: at most one a second
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

// What a job needs before it is queued: its spec checked and its problem built. Building parses
// the graph and prices it (20-30 s for a million ops here), so it runs off the coordinator's thread
// (`off_thread`); nothing here touches the coordinator's state (the cache has its own lock).
struct PreparedJob {
  JobSpec spec;
  std::shared_ptr<const BuiltProblem> problem;
  std::string spec_text;  // a durable job's spec as the store keeps it (the graph's content within)
};

// coordinator.cpp: a job's way through the queue.
// Stores a job's record; `then` (when given) hears the store's error, empty once it is stored.
void put_job(Self self, const JobRecord& record, std::function<void(const std::string&)> then = {});
Status check_spec(const JobSpec& spec);
// A stored spec, run again (resumed, or improved in the background), made to pass check_spec's
// newer limits: a batch stored longer than kLongestBatch (before that limit) is shortened to it.
JobSpec stored_spec(JobSpec spec);
Result<PreparedJob> prepare_job(JobSpec spec, ProblemCache* cache, bool durable, const std::function<void()>& before_build);
// The job with its id and QUEUED record (`prepared` durable: with its spec's text, to store).
Job make_job(Self self, PreparedJob prepared, JobHooks hooks);
// A job's record message: a background run's says it is one, and of which job.
std::string record_message(const Job& job, const std::string& text);
// Queues a job (priority first, then submission order); a client's job stops a background run.
void enqueue(Self self, Job job);
void start_next(Self self);
// enqueue, then start_next.
void admit(Self self, Job job);
// The cancels that came while the job's QUEUED record was being written; it no longer is.
std::vector<CancelAnswer> take_recording(Self self, const std::string& id);
// A job cancelled before it started: its record says so, its waiters hear it, and `cancels` are
// answered once the record is stored.
void cancel_unstarted(Self self, const Job& job, std::vector<CancelAnswer> cancels);
void cancel(Self self, const std::string& id, const CancelAnswer& answer);

// coordinator_clients.cpp
// A client's submit: answered once its job is recorded (or refused); a submit key makes retries safe.
void submit_durable(Self self, const caf::actor& gateway, const std::string& peer, const wire::Request& request);
void on_client(Self self, const wire::Envelope& e);

// coordinator_recovery.cpp
// At start (options.submit_keys, options.recover): the stored jobs' submit keys (keyed submits
// wait for them), and the jobs a stopped or killed coordinator left back to the queue.
void read_store_at_start(Self self);

// coordinator_improvement.cpp
// Every 2 s while --improve is on: starts a background run once the cluster has been idle long enough.
void improvement_tick(Self self);
// After a background run of (graph, runtime) ends: drops the problem's runs beyond --improve-keep.
void drop_old_background_runs(Self self, const Fingerprint& graph, const Fingerprint& runtime);

}  // namespace gantry::coordinator_detail
