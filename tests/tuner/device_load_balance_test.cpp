// Balancing device loads by moving stage boundaries (arithmetic on the costs, no simulation),
// with and without each device's start delay.
#include <catch2/catch.hpp>

#include "pipeline_fixtures.hpp"
#include "tuner/pipeline/pipeline_candidate.hpp"

using namespace gantry;

TEST_CASE("balancing with start delays gives the extra layer to the device that starts first", "[tuner][pipeline]") {
  // Five layers of F = B = W = 1 on two devices, 4 microbatches. By hand: 2 + 3 layers load the
  // devices 4 x 6 and 4 x 9 per iteration, 3 + 2 layers 4 x 9 and 4 x 6: the same most loaded
  // device, so plain balancing keeps either. The second device starts after the first
  // microbatch's F on the first (one per layer there): 2 + 3 layers end no sooner than
  // 2 + 36 = 38, 3 + 2 layers no sooner than max(36, 3 + 24) = 36, and 4 + 1 at 48.
  auto source = gantry::testing::layer_source({1, 1, 1, 1, 1}, 2);
  CandidateEvaluator evaluator(*source, 4);
  auto start = layout_candidate(*source, {1, false});
  REQUIRE(start);
  PipelineCandidate late_heavy = start.value();
  late_heavy.partition = {{0, 2}, {2, 5}};
  CHECK(balance_device_loads(evaluator, late_heavy, 2).partition == late_heavy.partition);
  const Partition early_heavy = {{0, 3}, {3, 5}};
  CHECK(balance_device_loads(evaluator, late_heavy, 2, /*start_delays=*/true).partition == early_heavy);
  PipelineCandidate from_early = start.value();
  from_early.partition = early_heavy;
  CHECK(balance_device_loads(evaluator, from_early, 2, true).partition == early_heavy);
}
