#pragma once
// The rollout pool: the one place that knows which workers exist and what they are running.
// Tuners (and, next, learners and pipeline tuners) ask it to run tasks; it leases each task to a
// free slot of some worker, with a lease id and a deadline, and answers the asker when the result
// comes back. A worker that stops answering (3 missed heartbeats), a lease past its deadline or a
// task that failed on its worker sends the task back to the queue; a result whose lease is no
// longer outstanding is dropped, so nothing is lost or counted twice. Workers join at any time
// with a hello and are reached through the link (gateway or in-process link) that carried it.
//
// Messages:
//   run_task, job, priority, RolloutTask    -> TaskResult (when a lease's result is committed)
//   withdraw, job                            the job's queued tasks come back `withdrawn`
//   slots, kind                              -> int: slots of the live workers that run `kind`
//   status                                   -> PoolStatus
//   add_problem, ProblemSpec / drop_problem, Fingerprint: the content workers may ask for
//   net_in, Envelope                         hello, heartbeat, done, need_problem, bye
//   lost, peer                               a transport says a peer is unreachable
#include <caf/all.hpp>

namespace gantry {

struct PoolOptions {
  double heartbeat_seconds = 1.0;   // heartbeats to every worker, and the liveness check's unit
  int liveness = 3;                 // missed heartbeats after which a worker is gone
  double lease_seconds = 60;        // a lease's deadline beyond its task's own time limit
  int max_attempts = 3;             // a task that failed this often fails its job
  bool timers = true;               // heartbeats and expiry (off under the test scheduler)
  bool announce = true;             // a line on stderr when a worker joins or goes
};

caf::actor spawn_rollout_pool(caf::actor_system& system, PoolOptions options);

}  // namespace gantry
