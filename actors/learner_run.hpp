#pragma once
// A learner job's run (JobSpec kind "train"): DOPPLER's stages on the job's graphs, with episodes
// from the rollout pool (any worker of the cluster) and everything kept in the store through the
// store actor: a summary of every batch (episodes family, under the job's id), the trained policy
// (name:version) and each graph's best placement (method doppler). The same code runs in a
// coordinator (a submitted job) and in the embedded cluster of `gantry train`.
//
// run_learner blocks its thread for the whole run: call it from a thread of its own (a detached
// actor, the command's main thread), never from the actor system's scheduler.
#include <caf/all.hpp>
#include <functional>
#include <string>
#include <vector>

#include "actors/job_spec.hpp"
#include "learner/trainer.hpp"

namespace gantry {

class ProblemCache;

struct LearnedGraph {
  std::string label, unit, cluster;
  long ops = 0;
  double teacher_makespan = 0, best_makespan = 0, greedy_makespan = 0;
  Placement best;
  Fingerprint graph, runtime;  // where its best is stored
};

struct LearnerReport {
  std::vector<LearnedGraph> graphs;
  std::vector<CurvePoint> curve;  // across stages
  long episodes = 0, batches = 0;
  double seconds = 0, rollout_seconds = 0, learner_seconds = 0;
  double best_ratio = 0, greedy_ratio = 0;  // makespan / teacher's, mean over the graphs
  std::string policy;             // "name:version" as stored
  std::string weights;            // the policy's bytes
  bool stopped = false;           // cancelled: what was learned until then is stored
  bool measured = false;          // the bests and teachers are measured makespans (stage III ran last)
  // Non-empty: no episode came back (the job was stopped first, or no worker runs the kind), so
  // nothing was learned or stored; why, for the job's message.
  std::string nothing_learned;
};

struct LearnerHooks {
  std::function<void(Stage, const CurvePoint&)> on_progress;  // a progress line's worth
  std::function<bool()> should_stop;                          // polled between batches
  // The process is shutting down (polled once should_stop is true): the job is not over, so
  // nothing is stored, the checkpoint stays and run_learner returns an error.
  std::function<bool()> shutting_down;
  // Checkpoints (actors/learner_checkpoint.hpp): read at the start and written while stages I and
  // II train, every checkpoint_seconds; off for jobs no one reruns (a `gantry train` process's).
  bool checkpoints = true;
  double checkpoint_seconds = 30;
};

// The settings' errors name the setting (as the command line spells it).
Status check_train_spec(const JobSpec& spec);

// `cache` builds the job's problems (shared with the node's workers; may be null). Batch summaries
// are numbered from `first_sequence`.
Result<LearnerReport> run_learner(caf::actor_system& system, const caf::actor& store, const caf::actor& pool,
                                  const JobSpec& spec, const std::string& job_id, ProblemCache* cache,
                                  const LearnerHooks& hooks, long first_sequence = 1);

}  // namespace gantry
