#pragma once
// The `pipeline-moves` task kind: a share of one step of the pipeline tuner, i.e. a list of
// candidate schemes (partition, placement, list-scheduler rules, optional explicit orders) of one
// pipeline problem, each evaluated by the worker's own CandidateEvaluator (compiled structures
// kept in the slot between tasks). The answer carries what the tuner compares candidates by: the
// iteration time, whether it ran and fitted, the bubble ratio, per-device busy time and peak memory.
// Candidates travel as compact MessagePack (an explicit order is a few kilobytes), not as JSON.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/rollout_task.hpp"
#include "core/result.hpp"
#include "tuner/pipeline/pipeline_candidate.hpp"

namespace gantry {

struct BuiltProblem;
struct SlotScratch;

inline constexpr const char* kPipelineMovesTask = "pipeline-moves";

// A candidate that could not be evaluated (malformed for the problem) comes back as its error.
struct MoveResult {
  bool ok = false;
  std::string error;
  CandidateResult result;
};

std::string encode_body(const std::vector<PipelineCandidate>& candidates);
Result<std::vector<PipelineCandidate>> decode_pipeline_moves(std::string_view body);

std::string encode_body(const std::vector<MoveResult>& results);
Result<std::vector<MoveResult>> decode_move_results(std::string_view body);

Result<std::string> run_pipeline_moves_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                            std::unique_ptr<SlotScratch>& scratch);

}  // namespace gantry
