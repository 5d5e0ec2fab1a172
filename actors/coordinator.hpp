#pragma once
// The coordinator: one long-lived actor that owns the job queue. Jobs come from clients over the
// wire (submit) or from the embedded `gantry tune`; they wait in the queue by priority, run up to
// `max_running` at a time, each with its own tuner and budget, on the shared rollout pool; every
// state change is recorded in the store (QUEUED, RUNNING, then COMPLETE / CANCELLED / FAILED).
//
// Messages:
//   submit, JobSpec, JobHooks   -> std::string job id (or an error naming what is wrong)
//   await, job id               -> TuneOutcome, when the job ends
//   cancel, job id              -> std::string (what happened), or an error for an unknown job
//   net_in, Envelope            client requests (submit, status, cancel, jobs) answered by reply
#include <caf/all.hpp>
#include <functional>

namespace gantry {

class ProblemCache;

struct CoordinatorOptions {
  int max_running = 4;             // jobs running at once; the rest wait in the queue
  bool timers = true;              // tuners' budget clocks (off under the test scheduler)
  ProblemCache* cache = nullptr;   // the process's built problems (shared with embedded workers)
  // Tests: runs where a submitted job's problem is about to be built (off the coordinator's thread).
  std::function<void()> before_build;
  // Clients' submit keys: read the stored jobs' keys at start, so that a client's retry after a
  // restart finds its job (a served coordinator; an embedded one gets no keyed submits).
  bool submit_keys = false;
  // At start, re-queue the jobs a stopped or killed coordinator left (stored as INTERRUPTED with
  // their spec); each goes on from its stored episodes and best (a served coordinator).
  bool recover = false;
  // Background improvement (actors/background_improvement.hpp): once no client job has been
  // queued or running for `improve_after` seconds, a stored problem is tuned again for
  // `improve_seconds` (0: never) at the lowest priority; a job submitted meanwhile stops it.
  double improve_seconds = 0;
  double improve_after = 10;
  int improve_keep = 10;  // background runs of a problem kept in the store; older ones are dropped
};

caf::actor spawn_coordinator(caf::actor_system& system, caf::actor store, caf::actor pool, CoordinatorOptions options);

}  // namespace gantry
