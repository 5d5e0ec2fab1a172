#pragma once
// One unit of rollout work and its answer. Tasks are plain values with no reference to the job that
// asked for them: a task can be leased to any slot, in this process or on another host, re-queued
// when its worker is lost, and run again with the same outcome. The problem travels by its content
// fingerprint (see actors/problem_spec.hpp); workers fetch and cache the content once.
#include <cstdint>
#include <string>

#include "core/fingerprint.hpp"
#include "core/placement.hpp"

namespace gantry {

// Anneal from `start`, perturbed first when `perturb` > 0. A job's annealing chains live in its
// tuner: a batch that continues a chain starts where that chain's previous batch ended.
struct BatchRequest {
  Fingerprint problem;
  Placement start;
  std::uint64_t seed = 1;
  long evaluations = 0;   // at most this many simulator runs, exactly this many unless `seconds`
                          // runs out first (0 = no limit)
  double seconds = 0.2;   // at most this long (0 = no limit)
  double t_start = 0.02, t_end = 0.002;
  double perturb = 0;     // share of ops moved to random devices before annealing
  long sequence = 0;      // the job's batch number
  int attempt = 0;        // earlier runs of this batch that failed (set by the pool when it leases it)
  int fail_times = 0;     // fault injection (tests): the batch fails while attempt < fail_times
};

struct BatchResult {
  long sequence = 0;
  long evaluations = 0;
  double best_makespan = 0;
  double mean_makespan = 0;
  Placement best;
  Placement last;         // where the walk ended: the chain's next start
  std::string worker;     // the worker that ran it (a name)
  std::string error;      // non-empty: the batch failed on its worker (nothing was evaluated)
  bool withdrawn = false; // never run: the job stopped before a slot took it
};

}  // namespace gantry
