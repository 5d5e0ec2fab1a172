#pragma once
// A tuning job: rollouts search placements in parallel on their own simulators, a tuner actor keeps
// the best, and every batch and improvement is persisted in the store. This header is the embedded
// job's whole interface; the CAF actor system behind it stays in actors/*.cpp.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/fingerprint.hpp"
#include "core/graph.hpp"
#include "actors/job_spec.hpp"
#include "core/result.hpp"
#include "sim/sim_options.hpp"
#include "storage/records.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

struct TuneProblem {
  const Graph& graph;
  const Cluster& cluster;
  const CostTable& costs;
  SimOptions sim;
  std::string graph_label;  // shown in listings ("llama-layer", a file path)
  std::string graph_json;   // the graph itself, stored so a best can be re-simulated later
  const ProfileTable* profiles = nullptr;  // measured profiles to cost it with (null: the roofline)
};

struct TuneProgress {
  enum class Kind { improvement, tick } kind = Kind::tick;
  double elapsed = 0;        // seconds since the job started
  long evaluations = 0;
  double best_makespan = 0;
  std::string method;        // what found the current best
  double fraction = 0;       // of the budget used (0..1)
};

struct TuneOptions {
  std::string data_dir;            // the store (created if missing)
  int rollouts = 0;                // rollout actors (0 = hardware threads)
  double budget_seconds = 30;      // 0 = no time limit
  long budget_evaluations = 0;     // 0 = no evaluation limit
  double patience_seconds = 0;     // stop after this long without improvement (0 = never)
  double batch_seconds = 0.2;      // length of one rollout batch (when batch_evaluations == 0)
  long batch_evaluations = 0;      // fixed batch size instead (deterministic runs)
  std::uint64_t seed = 1;
  bool deterministic = false;      // CAF test scheduler, no detached threads (tests)
  const std::atomic<bool>* cancel = nullptr;  // set to stop early (Ctrl-C): the job ends CANCELLED
  std::function<void(const TuneProgress&)> on_progress;  // improvements and ~2 ticks per second
  // Fault injection (tests): spawning rollout `spawn` throws as if its thread could not be created;
  // batch number `batch` fails on the first `batch_times` workers that get it; the first
  // `store_puts` bests fail to store.
  struct Faults {
    int spawn = -1;
    long batch = -1;
    int batch_times = 1;
    int store_puts = 0;
  } faults;
};

// The most rollout actors a job may have: 4 per hardware thread, at most 256.
int max_rollouts();

struct TuneOutcome {
  std::string job_id;
  JobState state = JobState::complete;
  PlacementOutcome best;        // placement, simulated makespan, method that found it
  std::string best_heuristic;   // the best of the heuristics run first
  double heuristic_makespan = 0;
  bool resumed = false;         // started from a best already in the store
  double resumed_makespan = 0;
  long evaluations = 0;         // heuristics + rollouts; equals budget_evaluations when that is set
  long heuristic_evaluations = 0;
  double heuristic_seconds = 0; // part of `seconds`, before any rollout started
  long batches = 0;
  double seconds = 0;
  double rollout_seconds = 0;   // the rollouts' time on the job's tasks (heuristics and batches)
  // Why the job stopped: "time budget used", "evaluation budget used", "no improvement for ...
  // (--patience)", "cancelled", or for a FAILED job what failed (a rollout, storing the best).
  std::string stop_reason;
  Fingerprint graph, runtime;   // the store key of the result
};

// Runs the job on an embedded cluster: a coordinator and one worker with `options.rollouts` slots in
// this process, over inproc:// (or direct links under the test scheduler), with the very code that
// `gantry coordinator` and `gantry worker` run between hosts.
Result<TuneOutcome> run_tune_job(const TuneProblem& problem, const TuneOptions& options);

// The job as a coordinator takes it: the problem as content, the budgets of `options`.
JobSpec make_job_spec(const TuneProblem& problem, const TuneOptions& options);

}  // namespace gantry
