#pragma once
// The kinds of rollout task a worker runs, by name. A worker announces the names in its hello and
// the pool leases it only tasks of those kinds, so a kind that needs something only some workers
// have (a GPU, a learner's runtime) is added here and announced only where it runs.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/rollout_task.hpp"
#include "core/result.hpp"

namespace gantry {

struct BuiltProblem;

// What a rollout slot keeps from one task of a kind to the next (a simulator and its buffers).
struct SlotScratch {
  virtual ~SlotScratch() = default;
};

struct TaskKind {
  std::string name;
  // Runs one task on the slot's thread: the answer's body, or why the task failed. `scratch` is
  // the slot's own for this kind (empty at first; the kind may fill it).
  std::function<Result<std::string>(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                     std::unique_ptr<SlotScratch>& scratch)>
      run;
  bool pipeline = false;  // runs on pipeline problems (BuiltProblem::pipeline), not graphs
};

const std::vector<TaskKind>& task_kinds();               // every kind this build runs
// Null if none has that name. The measure:BACKEND:N kinds are not here: they run on a worker's
// executor devices (actors/measure_task.hpp, measure_task_kind), which its slots carry.
const TaskKind* find_task_kind(const std::string& name);
std::vector<std::string> task_kind_names();  // what every worker offers (not measure:*, which needs devices)

}  // namespace gantry
