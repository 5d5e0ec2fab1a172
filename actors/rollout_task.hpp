#pragma once
// One unit of work for a rollout slot, and its answer. The pool leases tasks without knowing what
// they do: a task names its kind (what runs it on a worker: actors/task_kinds.hpp), the problem it
// works on (by content fingerprint; workers fetch and cache the content once, see
// actors/problem_spec.hpp) and carries the kind's request as bytes. Tasks are plain values with no
// reference to the job that asked for them, so any slot of any worker that runs the kind can take
// one, and a task re-queued after its worker was lost runs again with the same outcome.
#include <cstdint>
#include <string>

#include "core/fingerprint.hpp"

namespace gantry {

struct RolloutTask {
  std::string kind;      // "anneal", "heuristics", ...: a worker announces the kinds it runs
  Fingerprint problem;
  std::string body;      // the kind's request (MessagePack, written by the kind's codec)
  double seconds = 0;    // how long it may run (0 = bounded by its own work); a lease's deadline
                         // is this plus the pool's --lease-seconds
  long sequence = 0;     // the asker's number for it (a job's batch number)
  int attempt = 0;       // earlier runs that failed (set by the pool when it leases the task)
};

struct TaskResult {
  long sequence = 0;
  std::string body;       // the kind's answer
  std::string worker;     // the worker that ran it (a name)
  std::string error;      // non-empty: the task failed on its worker (the body is empty)
  double seconds = 0;     // how long the rollout worked on it
  bool withdrawn = false; // never run: the asker withdrew it before a slot took it
};

}  // namespace gantry
