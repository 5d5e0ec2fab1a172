#pragma once
// Pipeline schedules by name: each kind says how it lays out virtual stages and builds its
// per-device orders. The built-in baselines are registered here; a tuner registers its own.
#include <deque>
#include <functional>
#include <string>

#include "core/pipeline_scheme.hpp"
#include "core/result.hpp"
#include "tuner/pipeline/schedules.hpp"

namespace gantry {

using ScheduleBuilder = std::function<Result<PipelineScheme>(int devices, int microbatches, const StageLayout& layout,
                                                             const StageCosts& costs)>;

struct ScheduleKind {
  std::string name;         // looked up as NAME, or NAME:ARGUMENT
  std::string usage;        // how to write it, e.g. "interleaved[:V]"
  std::string description;  // one line for --help
  // The stage layout for ARGUMENT (empty when none is given); an error when it is not accepted.
  std::function<Result<StageLayout>(const std::string& argument)> layout;
  ScheduleBuilder build;    // costs are those of devices x layout.chunks stages in the layout's placement
};

struct ScheduleChoice {
  const ScheduleKind* kind = nullptr;
  StageLayout layout;
};

class ScheduleRegistry {
 public:
  // An error when the name is taken or the kind is incomplete.
  Status add(ScheduleKind kind);
  // "NAME" or "NAME:ARGUMENT"; an unknown name is an error listing the known ones.
  Result<ScheduleChoice> find(const std::string& spec) const;
  std::string usage() const;  // "gpipe, 1f1b, interleaved[:V], zb, zbv"
  std::string help() const;   // one "usage: description" line per kind

 private:
  std::deque<ScheduleKind> kinds_;  // stable addresses for ScheduleChoice
};

// The process-wide registry, holding gpipe, 1f1b, interleaved[:V], zb and zbv.
ScheduleRegistry& schedule_registry();

}  // namespace gantry
