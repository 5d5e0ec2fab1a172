// The search baselines of the pipeline tuner: what they return is what the evaluator says of it,
// and an annealing walk within a layout keeps the start's stages.
#include <catch2/catch.hpp>

#include "pipeline_fixtures.hpp"
#include "tuner/pipeline/pipeline_random_search.hpp"

using namespace gantry;

TEST_CASE("annealing: within the layout it ends at the layout's optimum, with new layouts between it and the work "
          "bound, as the evaluator prices it",
          "[tuner][pipeline]") {
  // 16 layers of F = B = W = 1 on 4 devices, 4 microbatches. The start, ZB-H1 on 4 layers a
  // stage (F = B = W = 4), runs m (F+B+W) + (p-1)(F+B-W) = 48 + 12 = 60 (the zero-bubble paper's
  // closed form). No scheme of one stage per device is faster: with 4 layers a stage the last
  // device waits 3 F = 12 for its first input and then works 48; any other partition gives a
  // stage 5 layers, 5 x 3 x 4 = 60 of work. Finer stages shorten the wait (new layouts pay), and
  // nothing beats work / devices = 16 x 3 x 4 / 4 = 48.
  auto source = testing::layer_source(std::vector<double>(16, 1.0), 4, {});
  CandidateEvaluator evaluator(*source, 4);
  auto start = layout_candidate(*source, {1, false});
  REQUIRE(start);
  const double start_time = evaluator.evaluate(start.value()).value().iteration_time;
  CHECK(start_time == Approx(60));
  int other_counts = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    for (AnnealMoves moves : {AnnealMoves::with_new_layouts, AnnealMoves::within_layout}) {
      auto walked = anneal(evaluator, start.value(), 400, 4, seed, {}, moves);
      REQUIRE(walked);
      const PipelineSearchResult& w = walked.value();
      CHECK(w.evaluations == 400);
      CandidateEvaluator fresh(*source, 4);
      CHECK(fresh.evaluate(w.best).value().iteration_time == Approx(w.best_result.iteration_time));
      if (moves == AnnealMoves::within_layout) {
        CHECK(w.best.placement.size() == start.value().placement.size());
        CHECK(w.best_result.iteration_time == Approx(60));
      } else {
        CHECK(w.best_result.iteration_time < 60 - 1e-9);
        CHECK(w.best_result.iteration_time >= 48 - 1e-9);
        other_counts += w.best.placement.size() != start.value().placement.size();
      }
    }
  }
  CHECK(other_counts >= 2);  // with new layouts the best often has more stages than the start
}
