#pragma once
// The messages the tuning actors exchange (in-process only: CAF 0.17 "unsafe" local types, never
// serialized; between processes gantry speaks ZeroMQ).
#include <caf/all.hpp>
#include <string>

#include "storage/records.hpp"
#include "actors/tune_job.hpp"
#include "tuner/local_search.hpp"

namespace gantry {

using put_best_atom = caf::atom_constant<caf::atom("putbest")>;
using put_episode_atom = caf::atom_constant<caf::atom("putepisode")>;
using put_job_atom = caf::atom_constant<caf::atom("putjob")>;
using get_best_atom = caf::atom_constant<caf::atom("getbest")>;
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;  // the store's own WAL timer (no reply)
using batch_atom = caf::atom_constant<caf::atom("batch")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using run_job_atom = caf::atom_constant<caf::atom("runjob")>;
using job_done_atom = caf::atom_constant<caf::atom("jobdone")>;

// Work for one rollout: anneal from `start` (perturbed first when `perturb` > 0), or continue
// the rollout's own annealing chain where its previous batch ended when `continue_chain`.
struct BatchRequest {
  Placement start;
  bool continue_chain = false;
  std::uint64_t seed = 1;
  long evaluations = 0;   // at most this many simulator runs, exactly this many unless `seconds`
                          // runs out first (0 = no limit)
  double seconds = 0.2;   // at most this long (0 = no limit)
  double t_start = 0.02, t_end = 0.002;
  double perturb = 0;     // share of ops moved to random devices before annealing
  long sequence = 0;
  bool fail = false;      // fault injection (tests): the rollout fails this batch
};

struct BatchResult {
  AnnealResult result;
  int rollout = 0;
  long sequence = 0;
};

// Answers of the store actor: a value or the store's error text.
struct StoreReply {
  bool ok = true;
  bool stored = false;  // put_if_better: it became the new best
  std::string error;
};

struct StoredBest {
  bool found = false;
  ScheduleRecord record;
  std::string error;
};

}  // namespace gantry

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::BatchRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::BatchResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoreReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::StoredBest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::ScheduleRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::EpisodeRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::JobRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::Fingerprint)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gantry::TuneOutcome)
