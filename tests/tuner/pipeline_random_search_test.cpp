// The search baselines of the pipeline tuner: what they return is what the evaluator says of it,
// and an annealing walk within a layout keeps the start's stages.
#include <catch2/catch.hpp>

#include "pipeline_fixtures.hpp"
#include "tuner/pipeline/pipeline_random_search.hpp"

using namespace gantry;

TEST_CASE("annealing: its best is its start or better, as the evaluator prices it; a walk within the layout keeps the "
          "stage count",
          "[tuner][pipeline]") {
  // 16 equal layers on 4 devices, 4 microbatches: one stage per device idles through long
  // warm-up and cool-down, finer interleaved stages shorten them, so new layouts pay.
  auto source = testing::layer_source(std::vector<double>(16, 1.0), 4, {});
  CandidateEvaluator evaluator(*source, 4);
  auto start = layout_candidate(*source, {1, false});
  REQUIRE(start);
  const double start_time = evaluator.evaluate(start.value()).value().iteration_time;
  int other_counts = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    for (AnnealMoves moves : {AnnealMoves::with_new_layouts, AnnealMoves::within_layout}) {
      auto walked = anneal(evaluator, start.value(), 400, 4, seed, {}, moves);
      REQUIRE(walked);
      const PipelineSearchResult& w = walked.value();
      CHECK(w.evaluations == 400);
      CHECK(w.best_result.iteration_time <= start_time);
      CandidateEvaluator fresh(*source, 4);
      CHECK(fresh.evaluate(w.best).value().iteration_time == Approx(w.best_result.iteration_time));
      if (moves == AnnealMoves::within_layout) CHECK(w.best.placement.size() == start.value().placement.size());
      else other_counts += w.best.placement.size() != start.value().placement.size();
    }
  }
  CHECK(other_counts >= 2);  // with new layouts the best often has more stages than the start
}
