#pragma once
// The messages gantry's actors exchange inside one process. They are plain values (no references,
// no raw pointers), but CAF 0.17 cannot serialize them and does not need to: whatever crosses a
// process is encoded by actors/net/wire.hpp and carried by a gateway as an Envelope.
#include <caf/all.hpp>
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/job_spec.hpp"
#include "actors/learner_run.hpp"
#include "actors/net/wire.hpp"
#include "actors/rollout_task.hpp"
#include "actors/tune_job.hpp"
#include "core/deadline.hpp"
#include "storage/records.hpp"

namespace gantry {

// store
using put_best_atom = caf::atom_constant<caf::atom("putbest")>;
using put_episode_atom = caf::atom_constant<caf::atom("putepisode")>;
using put_job_atom = caf::atom_constant<caf::atom("putjob")>;
using get_best_atom = caf::atom_constant<caf::atom("getbest")>;
using get_jobs_atom = caf::atom_constant<caf::atom("getjobs")>;
using get_job_atom = caf::atom_constant<caf::atom("getjob")>;  // (job id) -> StoredJobs: none, or it with its spec
using drop_jobs_atom = caf::atom_constant<caf::atom("dropjobs")>;  // (job ids) -> StoreReply
using list_best_atom = caf::atom_constant<caf::atom("listbest")>;
using get_history_atom = caf::atom_constant<caf::atom("gethistory")>;
using put_content_atom = caf::atom_constant<caf::atom("putcontent")>;
using tally_atom = caf::atom_constant<caf::atom("tally")>;
using improve_atom = caf::atom_constant<caf::atom("improve")>;  // the coordinator's background improvement tick
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;  // the store's own WAL timer (no reply)
using write_atom = caf::atom_constant<caf::atom("write")>;  // the store writes the episodes it holds
using put_policy_atom = caf::atom_constant<caf::atom("putpolicy")>;
using get_policy_atom = caf::atom_constant<caf::atom("getpolicy")>;
using get_job_policy_atom = caf::atom_constant<caf::atom("jobpolicy")>;  // (job id) -> StoredPolicy
using list_policies_atom = caf::atom_constant<caf::atom("listpolicy")>;
using put_measurement_atom = caf::atom_constant<caf::atom("putmeasure")>;  // -> StoreReply (stored: kept with the best)
using add_profiles_atom = caf::atom_constant<caf::atom("addprofile")>;     // profile samples JSON -> StoreReply
// a job's checkpoint (job id, bytes) -> StoreReply; (job id) -> StoredCheckpoint; drop (job id) -> StoreReply
using put_checkpoint_atom = caf::atom_constant<caf::atom("putckpt")>;
using get_checkpoint_atom = caf::atom_constant<caf::atom("getckpt")>;
using drop_checkpoint_atom = caf::atom_constant<caf::atom("dropckpt")>;
// rollouts and the pool
using run_task_atom = caf::atom_constant<caf::atom("runtask")>;
using withdraw_atom = caf::atom_constant<caf::atom("withdraw")>;
using slots_atom = caf::atom_constant<caf::atom("slots")>;
// (worker name, why) to the pool: an answer of that worker failed its asker's checks; it takes no
// more tasks until it restarts (a new process under its name).
using distrust_atom = caf::atom_constant<caf::atom("distrust")>;
using add_problem_atom = caf::atom_constant<caf::atom("addproblem")>;
using drop_problem_atom = caf::atom_constant<caf::atom("dropproblm")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
// transport: an Envelope that arrived, or one to send
using net_in_atom = caf::atom_constant<caf::atom("netin")>;
using net_out_atom = caf::atom_constant<caf::atom("netout")>;
using lost_atom = caf::atom_constant<caf::atom("peerlost")>;
// jobs
using start_atom = caf::atom_constant<caf::atom("start")>;
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using await_atom = caf::atom_constant<caf::atom("await")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using status_atom = caf::atom_constant<caf::atom("status")>;
using progress_atom = caf::atom_constant<caf::atom("progress")>;  // a running job's live figures

// A store that has not answered a request within this long has failed (a hung disk): the request
// errs instead of holding its job forever.
constexpr std::chrono::seconds kStoreTimeout{60};

// CAF 0.17's timers and request timeouts take integral durations.
inline std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000 + 0.5));
}

// An error's own words when it carries them (errors made with a message), else CAF's rendering.
inline std::string error_text(caf::actor_system& system, const caf::error& e) {
  if (e.context().match_elements<std::string>()) return e.context().get_as<std::string>(0);
  return system.render(e);
}

struct PipelineJobReport;
struct PipelineTuneProgress;

// What an in-process submitter (the embedded `gantry tune`, `gantry train` or `gantry pipeline
// tune`) hears of its job while it runs: a tuning job's progress; a learner job's progress lines
// and its full report; a pipeline job's phases and its full report.
struct JobHooks {
  std::function<void(const TuneProgress&)> on_progress;
  std::function<void(Stage, const CurvePoint&)> on_learning;
  std::function<void(const LearnerReport&)> on_learned;
  std::function<void(const PipelineTuneProgress&)> on_pipeline_progress;
  std::function<void(const PipelineJobReport&)> on_pipeline_tuned;
  std::function<void(const std::string&)> on_status;  // what a job waits for (a measurement: a worker)
};

// Answers of the store actor: a value or the store's error text.
struct StoreReply {
  bool ok = true;
  bool stored = false;  // put_if_better: it became the new best
  std::string error;
};

// A measured makespan of a placement, for the stored best of (graph, runtime) when it still has
// that placement (Store::record_measurement).
struct StoredMeasurement {
  Fingerprint graph, runtime;
  Placement placement;
  double median = 0;
  int runs = 0;
  std::string backend;
};

struct StoredBest {
  bool found = false;
  ScheduleRecord record;
  std::string error;
};

// What a job's stored episodes add up to (a restarted coordinator resumes the job from them).
struct EpisodeTally {
  long episodes = 0, evaluations = 0;
  long last_sequence = -1;
  double last_time = 0;  // unix seconds of the last episode
  std::string error;
};

// A gateway's own counters.
struct GatewayCounters {
  long malformed = 0;  // messages dropped unread
  long refused = 0;    // connections refused by CURVE authentication
  long dropped_sends = 0;  // messages not sent because their peer's queue was full (a slow peer)
};

struct StoredJobs {
  std::vector<JobRecord> jobs;
  std::string error;
};

struct StoredBests {
  std::vector<ScheduleRecord> records;
  std::string error;
};

// put_policy: the record as stored (its version); get_policy: the record, if found.
struct StoredPolicy {
  bool found = false;
  PolicyRecord record;
  std::string error;
};

struct StoredCheckpoint {
  bool found = false;
  std::string bytes;
  std::string error;
};

struct StoredPolicies {
  std::vector<PolicyRecord> records;  // without their weights
  std::string error;
};

struct StoredHistory {
  std::vector<HistoryRecord> records;
  std::string error;
};

// The rollout pool as seen from outside (gantry status).
struct PoolStatus {
  struct Worker {
    std::string peer, name, host;
    long pid = 0;
    int slots = 0, busy = 0;
    long done = 0;              // results of this worker committed
    double busy_seconds = 0;    // its rollouts' time on them
    double silent_seconds = 0;  // since its last message
    std::string executors;      // its executor devices ("cpu:2"; empty: none), from the measure kinds it runs
    std::string distrusted;     // why it takes no tasks (an answer that failed its checks); empty: it takes them
  };
  std::vector<Worker> workers;
  long queued = 0, leased = 0;
  long committed = 0;    // results accepted
  long requeued = 0;     // tasks sent back to the queue (lost worker, expired lease, failed batch)
  long stale = 0;        // results for leases that were no longer outstanding (dropped)
  long malformed = 0;    // messages that could not be read (dropped)
  int slots() const {
    int n = 0;
    for (const Worker& w : workers) n += w.slots;
    return n;
  }
};

}  // namespace gantry

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::RolloutTask)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::TaskResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoreReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredBest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredMeasurement)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredJobs)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredBests)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredHistory)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredPolicy)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredCheckpoint)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredPolicies)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::PolicyRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::EpisodeTally)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::GatewayCounters)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::ScheduleRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::EpisodeRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::JobRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::Fingerprint)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::TuneOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::JobSpec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::JobHooks)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::ProblemSpec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::PoolStatus)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::wire::Envelope)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const gantry::BuiltProblem>)
