#pragma once
// What the store keeps. Plain structs: the RocksDB encoding (MessagePack with a schema version,
// big-endian keys) lives in storage/codec.cpp and never leaks into headers.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "core/placement.hpp"

namespace gantry {

// The best known placement of one graph on one cluster (column family `schedules`).
struct ScheduleRecord {
  Fingerprint graph, cluster;
  std::string graph_label;    // where the graph came from (file or workload spec), for listings
  std::string cluster_name;
  std::string method;         // what found it (heft, search, ...)
  std::string sim;            // simulator mode it was evaluated with ("default", "doppler", ...)
  std::string unit;           // the graph's cost unit
  double makespan = 0;
  double lower_bound = 0;
  Placement placement;
  std::string job_id;
  double found_at = 0;        // unix seconds
  long evaluations = 0;       // evaluations the job had spent when it found this
  // The simulator code that computed `makespan` (sim/model_version.hpp; 1 for records written
  // before the field existed) and its options as JSON (sim_options_json; empty in version 1
  // records, whose `sim` name says the same except the noise seed): enough to re-simulate.
  int model_version = 1;
  std::string sim_options;
  // A pipeline scheme's best (`gantry pipeline tune`) instead of a placement: the scheme
  // (scheme_to_json) and the tuner's candidate that builds it (to resume from), both JSON; then
  // `graph` fingerprints the model and pipeline configuration, `cluster` the cluster and pipeline
  // model, `makespan` is the iteration time and model_version is kPipelineModelVersion.
  std::string scheme, candidate;
  bool is_pipeline() const { return !scheme.empty(); }
  // The latest real measurement of `placement` (`gantry execute --best`): the median makespan in
  // seconds of `measured_runs` runs on an executor backend, at unix time measured_at; 0 runs: none.
  double measured = 0, measured_at = 0;
  int measured_runs = 0;
  std::string measured_backend;
};

// One improvement of a (graph, cluster) best, in time order (column family `history`).
struct HistoryRecord {
  double time = 0;  // unix seconds
  double makespan = 0;
  std::string method;
  std::string job_id;
  long evaluations = 0;
};

// A batch of candidates evaluated by one rollout (column family `episodes`, key job | sequence).
struct EpisodeRecord {
  std::string job_id;
  std::uint64_t sequence = 0;
  int rollout = 0;            // which annealing chain of the job (one per batch in flight)
  long candidates = 0;        // placements evaluated in the batch
  double best_makespan = 0;   // best of the batch
  double mean_makespan = 0;
  double time = 0;            // unix seconds
};

// One version of a learned placement policy (column family `policies`, key name | version).
struct PolicyRecord {
  std::string name;
  std::uint64_t version = 0;   // 1, 2, ... per name
  std::string weights;         // the policy's bytes (learner/policy_weights.hpp), opaque here
  std::string stage;           // how it was trained: "il", "sim", "il+sim", "real", "il+sim+real"
  std::string ablation;        // dual, plc-only, random-sel, gdp
  std::string graphs;          // what it was trained on (labels, comma separated)
  std::string cluster_name;
  int devices = 0;             // of its training clusters; 0 when they differ in size
  long episodes = 0;           // episodes of training behind this version (its parent's included)
  double seconds = 0;          // training time of this version
  double best_ratio = 0;       // best makespan / teacher makespan reached, mean over its graphs
  double greedy_ratio = 0;     // its greedy episode's makespan / teacher makespan, mean over its graphs
  std::string parent;          // "name:version" it was trained from (--init), empty when fresh
  double created = 0;          // unix seconds
  std::string job;             // the job that trained it (empty in records stored before jobs were kept)
  std::string curve;           // its training run's learning curve, CSV text (learner/learning_curve.hpp), opaque here
};

// interrupted: the record says RUNNING but its owner process is gone (killed); never written by
// the job itself, set when a store is opened or its jobs are listed.
enum class JobState { running, complete, failed, cancelled, interrupted, queued };
// "RUNNING", "COMPLETE", "FAILED", "CANCELLED", "INTERRUPTED", "QUEUED" (waiting in a coordinator's queue)
const char* to_string(JobState state);
// The inverse of to_string (case-insensitive); nullopt for anything else.
std::optional<JobState> parse_job_state(const std::string& text);
// Complete, failed or cancelled: the job will not run again (an interrupted one is requeued).
bool is_final(JobState state);

struct JobRecord {
  std::string id;
  std::string kind = "tune";  // the job spec's: tune, train or pipeline (records before it: tune)
  JobState state = JobState::running;
  Fingerprint graph, cluster;
  std::string graph_label, cluster_name;
  double started = 0, finished = 0;  // unix seconds (finished = 0 while running)
  long evaluations = 0;
  double best_makespan = 0;
  std::string message;  // why it failed, or a summary
  long owner_pid = 0;    // the process running the job, on host `owner_host`
  std::string owner_host;
  std::string spec;      // the job as submitted to a coordinator (JSON), so a restarted coordinator
                         // can run it on; empty for jobs run in their own process (`gantry tune`)
  // The client's key for its submit: a submit sent again with it (a retry after a lost reply) is
  // answered with this job instead of making another, also after a coordinator restart.
  std::string submit_key;
  // A background improvement run (gantry coordinator --improve): the job whose spec it ran again.
  std::string improves;
};

}  // namespace gantry
