#include "actors/rollout_actor.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>

#include "actors/messages.hpp"
#include "actors/problem_spec.hpp"
#include "actors/task_kinds.hpp"

namespace gantry {

caf::behavior rollout_actor(caf::event_based_actor* self, int index, ExecutorDevices devices) {
  auto scratch = std::make_shared<std::map<std::string, std::unique_ptr<SlotScratch>>>();
  const auto measure = std::make_shared<const TaskKind>(measure_task_kind(devices));
  return {
      [=](run_task_atom, const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task) -> TaskResult {
        TaskResult out;
        out.sequence = task.sequence;
        const TaskKind* kind = is_measure_kind(task.kind) ? measure.get() : find_task_kind(task.kind);
        if (!kind) {
          out.error = "rollout " + std::to_string(index) + " cannot run tasks of kind '" + task.kind + "'";
          return out;
        }
        if (kind->pipeline != problem->spec.is_pipeline()) {
          out.error = "a " + task.kind + " task works on " + (kind->pipeline ? "pipeline" : "graph") + " problems, not on " +
                      (problem->spec.is_pipeline() ? "a pipeline" : "a graph");
          return out;
        }
        const auto begin = std::chrono::steady_clock::now();
        try {  // a kind's failure is the task's, never the slot's
          auto body = kind->run(problem, task, (*scratch)[task.kind]);
          if (body) out.body = std::move(body).value();
          else out.error = "rollout " + std::to_string(index) + ": " + body.error().message;
        } catch (const std::exception& e) {
          out.error = "rollout " + std::to_string(index) + ": " + task.kind + " task failed: " + e.what();
          scratch->erase(task.kind);  // it may be half-updated
        }
        out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        return out;
      },
  };
}

}  // namespace gantry
