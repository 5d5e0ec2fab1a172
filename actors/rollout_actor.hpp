#pragma once
// A rollout actor is one slot of a worker: it runs tasks of any kind (actors/task_kinds.hpp), one
// at a time, and keeps nothing between them but each kind's scratch (a simulator's buffers): the
// problem and everything the task needs come with it.
#include <caf/all.hpp>

#include "actors/measure_task.hpp"

namespace gantry {

// Serves (run_task, shared_ptr<const BuiltProblem>, RolloutTask) -> TaskResult; measure tasks on
// the worker's executor `devices`.
caf::behavior rollout_actor(caf::event_based_actor* self, int index, ExecutorDevices devices);

}  // namespace gantry
