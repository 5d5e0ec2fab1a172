#pragma once
// The bubble-aware co-tuner of partition, placement and schedule (OctoPipe's iterative tuner).
// From the best of its starting candidates (actors/pipeline_problem.hpp: time-balanced layouts and,
// where memory binds, partitions that leave the first stages room for their warm-up,
// memory_fitting.hpp) it repeats its phases; every move is simulated and
// kept only when the iteration time drops with every device within its memory limit:
//   1. partition: shift the boundary between two neighbouring stages by one layer, the boundaries
//      of the most loaded stages first (stage imbalance is the main source of bubbles);
//   2. placement: scatter stages (more, finer virtual stages: interleaved and V layouts, each
//      with its own balanced partition, then its partition phase) and swap the devices of two
//      stages (non-contiguous maps; on mixed clusters, heavy stages on fast devices);
//   3. schedule: the list scheduler's rules, i.e. warm-up depth per device (more F before the first
//      B fills warm-up bubbles and costs memory), F or B first, W delayed into bubbles or run at
//      once, split or fused backward, and recomputation per device;
//   4. order: task moves on the scheme's own per-device orders, at its largest bubbles.
// Memory safety comes from the list scheduler: an F that would exceed a device's limit waits and
// pending W (which free memory) run first; a candidate still over the limit is rejected.
// It stops when a full pass gains less than `min_gain` or the budget ends. Then kicks (iterated
// local search from each layout's settled scheme) and an annealing walk look for other basins.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuner/pipeline/pipeline_candidate.hpp"

namespace gantry {

struct PipelineTuneProgress {
  std::string phase;  // "start", "partition", "placement", "schedule", "order", "kick", "anneal"
  int pass = 0;
  double iteration_time = 0, bubble_ratio = 0, peak_memory = 0;  // of the best so far (peak: largest device's)
  std::int64_t evaluations = 0;
  double seconds = 0;
  bool running = false;  // a report within the phase (PipelineTuneOptions::progress_seconds), not its end
};

struct PipelineTuneOptions {
  double min_gain = 0.001;           // a pass gaining less (relative) ends the tuning
  double budget_seconds = 0;         // 0: none
  std::int64_t max_evaluations = 0;  // 0: none
  int max_chunks = 4;                // virtual stages per device the placement phase tries
  int max_passes = 20;
  // Beside or after the kicks: a simulated-annealing walk from the best start, within its layout, for this
  // share of the evaluations of the descents and the kicks (planned: the descents' count times
  // 1 + kick_share; 0: none), beside the kicks on a thread of its own unless max_evaluations
  // is set (the same walk either way), then the descents again
  // from what it found, if better. The descents stop in the local optimum of the starts' basin;
  // on memory-bound models (few schemes fit) a walk through worse schemes reaches other basins
  // (nemotron-h-47b at p=16, before activation offload: 14.95 s by the descents, 14.79-14.95 s
  // after the walk, seeds 1-3; activation offload has since taken it to 11.131 s).
  // Walking from the descents' best instead (seed 1) ended better on three benchmark models by
  // 0.1-0.5% (seed 2: on one), took twice as long at p=8 and 328 s instead of 145.5 s on
  // nemotron-h-47b at p=16, where it found nothing.
  double anneal_share = 1.0;
  // Before the walk: iterated local search (kicks and descents from each layout's settled scheme)
  // for this share of the descents' evaluations (0: none).
  double kick_share = 2.0;
  std::uint64_t seed = 1;  // of the kicks and the annealing
  // Each phase's end, and within a phase that runs longer (running = true) about every
  // progress_seconds (at its next descent step or walk evaluation; 0: at each of them): the
  // best kept so far, which a phase's own candidates join at its end, and the evaluations (on
  // nemotron-h-47b at p=16 the placement phase, the kicks and the walk take 40, 96 and 40 s).
  std::function<void(const PipelineTuneProgress&)> on_progress;
  double progress_seconds = 10;
  // Polled between evaluations: when it turns true the tuner returns its best so far. Also
  // polled by the walk, which runs on a thread of its own beside the kicks when there is no
  // evaluation budget: it must be safe to call from two threads.
  std::function<bool()> should_stop;
  // Evaluates a step's moves elsewhere (the rollout pool's workers) instead of one by one here:
  // one entry per move, in order, empty for a malformed move. Steps too small to pay for the
  // round trip, and everything else (starts, bubble timings), stay on `evaluator`. The choice is
  // the same either way: the first of the best.
  // An error ends the tuning with its best so far (PipelineTuneResult::failure).
  std::function<Result<std::vector<std::optional<CandidateResult>>>(const std::vector<PipelineCandidate>&)> evaluate_moves;
  // A step with fewer tasks than this to simulate (moves x 3 x stages x microbatches) stays
  // here: it takes less than a round trip through the rollout pool (a few hundred microseconds;
  // a task costs tens of nanoseconds to simulate, and the evaluator answers repeated moves, a
  // third of them on small models, from memory). On the small models of
  // bench/pipeline-exact.sh every step is that small (nemotron-h-7l at p=4, m=4: 33 ms with
  // 8192, 25 ms with this; llama-3-8b at p=8, m=32 takes 5.6 s with either).
  std::size_t min_tasks_elsewhere = 32768;
};

struct PipelineTuneResult {
  PipelineCandidate start, best;
  CandidateResult start_result, best_result;
  std::vector<PipelineTuneProgress> history;  // one entry per phase of every pass
  std::int64_t evaluations = 0;
  int passes = 0;
  bool budget_ended = false;
  bool stopped = false;  // should_stop ended it
  std::string failure;   // evaluate_moves failed: why (the best so far is still the result)
};

// Tunes from the best of `starts` (at least one, each evaluable).
Result<PipelineTuneResult> tune_pipeline(CandidateEvaluator& evaluator, const std::vector<PipelineCandidate>& starts,
                                         const PipelineTuneOptions& options = {});

}  // namespace gantry
