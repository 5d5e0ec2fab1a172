#include "actors/task_kinds.hpp"

#include "actors/anneal_task.hpp"
#include "actors/episode_task.hpp"
#include "actors/pipeline_moves_task.hpp"
#include "actors/place_task.hpp"

namespace gantry {

const std::vector<TaskKind>& task_kinds() {
  static const std::vector<TaskKind> kinds = {
      {kAnnealTask, run_anneal_task},
      {kPlaceTask, run_place_task},
      {kEpisodesTask, run_episodes_task},
      {kPipelineMovesTask, run_pipeline_moves_task, /*pipeline=*/true},
  };
  return kinds;
}

const TaskKind* find_task_kind(const std::string& name) {
  for (const TaskKind& kind : task_kinds())
    if (kind.name == name) return &kind;
  return nullptr;
}

std::vector<std::string> task_kind_names() {
  std::vector<std::string> names;
  for (const TaskKind& kind : task_kinds()) names.push_back(kind.name);
  return names;
}

}  // namespace gantry
