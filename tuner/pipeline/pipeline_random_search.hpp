#pragma once
// The search baselines the pipeline tuner is measured against, on the same candidate space and
// the same evaluator: random search (independent random candidates) and plain simulated
// annealing (one random change at a time, worse candidates accepted with probability
// exp(-increase / temperature), the temperature cooling geometrically). Both stop after a given
// number of evaluations, so that each is compared with the tuner at equal evaluations.
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "tuner/pipeline/pipeline_candidate.hpp"

namespace gantry {

struct PipelineSearchResult {
  PipelineCandidate best;
  CandidateResult best_result;
  std::int64_t evaluations = 0;
};

// What a search may change about activation memory besides the schedule, as the tuner's own
// moves do: recomputation where the costs know the sizes involved (models), offload where they
// also know the devices' host links (clusters that give host_gbs).
struct MemoryMoves {
  bool recompute = false;
  std::vector<bool> offload;  // per device: it has a host link
  bool offloads() const;      // some device has one
};
MemoryMoves memory_moves(const CandidateEvaluator& evaluator);

// A random candidate: layout (1..max_chunks chunks, interleaved or V), partition (random cuts;
// none for per-stage costs), in-flight limits and rules; with `memory`, half of them with each
// device's stages holding, recomputing or offloading (a random quarter to all of) their
// activations (offload on devices with a host link), and the copies back issued 1, 2, 4, 8 or 16
// tasks ahead.
Result<PipelineCandidate> random_candidate(const StageSource& source, int max_chunks, std::mt19937_64& rng,
                                           const MemoryMoves& memory = {});

Result<PipelineSearchResult> random_search(CandidateEvaluator& evaluator, std::int64_t evaluations, int max_chunks,
                                           std::uint64_t seed);

// What an annealing move may change. The plain baseline searches the tuner's whole space: it also
// changes how a device's stages keep their activations (memory_moves of the evaluator's costs)
// and jumps to a new random layout (two moves in ten, in eleven with memory moves). A walk within
// the tuner, whose placement phase tries every layout and whose schedule phase recomputes and
// offloads, does neither: on nemotron-h-47b at p=16 memory moves made its walk 70 s instead of
// 45 s and found nothing; on bamba-9b it ended worse, on qwen3-30b-a3b better.
enum class AnnealMoves { with_new_layouts, within_layout };

// From `start`; a move shifts a stage boundary, swaps two devices, changes a rule or limit, or
// (with_new_layouts) changes how a device's stages keep their activations or how early copies
// come back, or draws a new random layout.
// `should_stop` (polled between evaluations) ends it early with its best so far.
Result<PipelineSearchResult> anneal(CandidateEvaluator& evaluator, const PipelineCandidate& start,
                                    std::int64_t evaluations, int max_chunks, std::uint64_t seed,
                                    const std::function<bool()>& should_stop = {},
                                    AnnealMoves moves = AnnealMoves::with_new_layouts);

}  // namespace gantry
