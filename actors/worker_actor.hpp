#pragma once
// A worker hosts rollout actors and serves a coordinator's rollout pool through a link (a gateway
// over ZeroMQ, or an in-process link): it says hello with its slot count, runs every assigned
// lease on an idle rollout, answers `done` with the lease id, fetches problem content it has not
// cached, sends a heartbeat every second and says hello again when the coordinator has been
// silent for three (the coordinator restarted or the network broke).
#include <caf/all.hpp>
#include <functional>
#include <string>
#include <vector>

#include "actors/measure_task.hpp"
#include "actors/task_kinds.hpp"

namespace gantry {

class ProblemCache;

struct WorkerOptions {
  std::string name;             // stable identity (default: host/pid)
  // The coordinator's endpoint, when the worker connects over the network: it then says when it
  // first hears the coordinator, when it hears nothing for long, and when it hears it again
  // (empty: a worker in the coordinator's process, which has nothing to report).
  std::string coordinator;
  double silence_report_seconds = 10;  // the first report of a silent coordinator (then 2x, 4x, ...)
  int slots = 1;                // rollout actors
  double heartbeat_seconds = 1.0;
  int liveness = 3;
  bool detached_rollouts = true;  // each rollout on its own thread (false under the test scheduler)
  bool timers = true;
  std::vector<std::string> kinds = task_kind_names();  // the task kinds it offers to run
  // Executor devices (`--devices cpu:N` or cuda:N): the worker also offers measure:BACKEND:1..N
  // (actors/measure_task.hpp) and runs each such task alone on the machine.
  ExecutorDevices devices;
  // Tests: runs where a problem's content is about to be built (off the worker's thread).
  std::function<void()> before_build;
};

// Spawns one rollout actor (detached or not, as the options say); throws std::system_error when
// its thread cannot be created.
caf::actor spawn_rollout(caf::actor_system& system, const WorkerOptions& options, int index);

// A worker serving with `rollouts` (one per slot). `cache` is shared by the workers of one process
// and must outlive them. Until connect_worker() gives it an uplink it only waits.
caf::actor spawn_worker(caf::actor_system& system, WorkerOptions options, ProblemCache* cache,
                        std::vector<caf::actor> rollouts);

// Links a worker to its uplink after both exist: the worker says hello through it. The uplink
// carries the worker's messages to the coordinator (net_out, Envelope) and hands it the
// coordinator's (net_in, Envelope).
void connect_worker(caf::actor worker, caf::actor uplink);

}  // namespace gantry
