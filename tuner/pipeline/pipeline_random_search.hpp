#pragma once
// The search baselines the pipeline tuner is measured against, on the same candidate space and
// the same evaluator: random search (independent random candidates) and plain simulated
// annealing (one random change at a time, worse candidates accepted with probability
// exp(-increase / temperature), the temperature cooling geometrically). Both stop after a given
// number of evaluations, so that each is compared with the tuner at equal evaluations.
#include <cstdint>
#include <functional>
#include <random>

#include "tuner/pipeline/pipeline_candidate.hpp"

namespace gantry {

struct PipelineSearchResult {
  PipelineCandidate best;
  CandidateResult best_result;
  std::int64_t evaluations = 0;
};

// A random candidate: layout (1..max_chunks chunks, interleaved or V), partition (random cuts;
// none for per-stage costs), in-flight limits and rules.
Result<PipelineCandidate> random_candidate(const StageSource& source, int max_chunks, std::mt19937_64& rng);

Result<PipelineSearchResult> random_search(CandidateEvaluator& evaluator, std::int64_t evaluations, int max_chunks,
                                           std::uint64_t seed);

// What an annealing move may change: the plain baseline also jumps to a new random layout (one
// move in five); a walk within the tuner, whose placement phase tries every layout, does not.
enum class AnnealMoves { with_new_layouts, within_layout };

// From `start`; a move shifts a stage boundary, swaps two devices, changes a rule or limit, or
// (with_new_layouts) draws a new random layout.
// `should_stop` (polled between evaluations) ends it early with its best so far.
Result<PipelineSearchResult> anneal(CandidateEvaluator& evaluator, const PipelineCandidate& start,
                                    std::int64_t evaluations, int max_chunks, std::uint64_t seed,
                                    const std::function<bool()>& should_stop = {},
                                    AnnealMoves moves = AnnealMoves::with_new_layouts);

}  // namespace gantry
