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

TEST_CASE("search baselines: they search recomputation and offload where the costs allow them, as the tuner does",
          "[tuner][pipeline]") {
  const int p = 4, m = 8;
  auto no_link = testing::tight_four_layers(0);
  auto fast = testing::tight_four_layers(10, 0.25);
  CandidateEvaluator held(*no_link, m), freed(*fast, m);
  CHECK_FALSE(memory_moves(held).recompute);
  CHECK_FALSE(memory_moves(held).offloads());
  CHECK(memory_moves(freed).recompute);
  CHECK(memory_moves(freed).offload == std::vector<bool>(p, true));

  // Half the random candidates keep every activation; the others draw one of six modes per
  // device (hold, recompute, offload 1/4 .. 1), so 1/2 + 1/2 x (1/6)^4 = 50.0% hold everything,
  // 1/2 x (1 - (5/6)^4) = 25.9% recompute somewhere and 1/2 x (1 - (1/3)^4) = 49.4% offload
  // somewhere. Each is a valid scheme.
  std::mt19937_64 rng(7);
  int plain = 0, recomputing = 0, offloading = 0;
  const int draws = 600;
  for (int i = 0; i < draws; ++i) {
    auto c = random_candidate(*fast, 1, rng, memory_moves(freed));
    REQUIRE(c);
    REQUIRE(freed.evaluate(c.value()));
    recomputing += !c.value().recompute.empty();
    offloading += !c.value().offload.empty();
    plain += c.value().recompute.empty() && c.value().offload.empty();
    for (double f : c.value().offload) CHECK((f == 0 || f == 0.25 || f == 0.5 || f == 0.75 || f == 1));
    CHECK(c.value().reload_ahead >= 1);
    CHECK(c.value().reload_ahead <= 16);
  }
  // Margins of about 5 binomial standard deviations (12.2, 10.7 and 12.2 draws).
  CHECK(plain == Approx(0.500 * draws).margin(60));
  CHECK(recomputing == Approx(0.259 * draws).margin(55));
  CHECK(offloading == Approx(0.494 * draws).margin(60));
  std::mt19937_64 same(7);
  for (int i = 0; i < 100; ++i) {
    auto c = random_candidate(*fast, 1, same);  // no memory moves asked for: none drawn
    REQUIRE(c);
    CHECK(c.value().recompute.empty());
    CHECK(c.value().offload.empty());
  }

  // On a cluster where only devices 2 and 3 have host links, only their stages offload.
  testing::LayerSourceOptions tight;
  tight.max_mem = 2.5;
  tight.input = 0.25;
  tight.device_host = {0, 0, 10, 10};
  auto half_linked = testing::layer_source({1, 1, 1, 1}, p, tight);
  CandidateEvaluator mixed(*half_linked, m);
  CHECK(memory_moves(mixed).offload == std::vector<bool>{false, false, true, true});
  std::mt19937_64 again(7);
  int offloading_there = 0;
  for (int i = 0; i < draws; ++i) {
    auto c = random_candidate(*half_linked, 1, again, memory_moves(mixed));
    REQUIRE(c);
    REQUIRE(mixed.evaluate(c.value()));  // a stage offloading without a link would be refused
    for (std::size_t s = 0; s < c.value().offload.size(); ++s)
      if (c.value().offload[s] > 0) {
        CHECK(c.value().placement[s] >= 2);
        ++offloading_there;
      }
  }
  CHECK(offloading_there > 100);

  // Plain annealing from the plain layout at equal evaluations: with the host links it finds a
  // scheme that frees activations and is faster than any it finds where every activation stays;
  // both fit.
  auto start = layout_candidate(*fast, {1, false});
  REQUIRE(start);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    INFO("seed " << seed);
    auto kept = anneal(held, start.value(), 600, 1, seed);
    auto walked = anneal(freed, start.value(), 600, 1, seed);
    REQUIRE(kept);
    REQUIRE(walked);
    REQUIRE(kept.value().best_result.feasible());
    REQUIRE(walked.value().best_result.feasible());
    const PipelineCandidate& best = walked.value().best;
    CHECK((!best.offload.empty() || !best.recompute.empty()));
    CHECK(walked.value().best_result.iteration_time < kept.value().best_result.iteration_time - 1e-9);
    // The tuner's walk within a layout leaves memory to the tuner's schedule phase.
    auto within = anneal(freed, start.value(), 600, 1, seed, {}, AnnealMoves::within_layout);
    REQUIRE(within);
    CHECK(within.value().best.offload.empty());
    CHECK(within.value().best.recompute.empty());
  }
}

TEST_CASE("annealing: from a start that does not fit, the walk is the same whatever the unit of time", "[tuner][pipeline]") {
  // The tight four-layer model in units of 1 and of 1/1024 (an exact scaling of every time): the
  // start runs 1F1B's depths without the memory rule, over the limit, so it has no time to scale
  // the temperature by; a walk that takes its scale from the first scheme that fits accepts and
  // refuses the same moves in both units.
  testing::LayerSourceOptions o;
  o.max_mem = 2.5;
  const double unit = 1.0 / 1024;
  auto whole = testing::layer_source({1, 1, 1, 1}, 4, o);
  auto scaled = testing::layer_source({unit, unit, unit, unit}, 4, o);
  auto start = layout_candidate(*whole, {1, false});
  REQUIRE(start);
  start.value().rules.respect_memory = false;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    INFO("seed " << seed);
    CandidateEvaluator a(*whole, 8), b(*scaled, 8);
    REQUIRE_FALSE(a.evaluate(start.value()).value().feasible());
    auto in_units = anneal(a, start.value(), 300, 4, seed);
    auto in_fractions = anneal(b, start.value(), 300, 4, seed);
    REQUIRE(in_units);
    REQUIRE(in_fractions);
    REQUIRE(in_units.value().best_result.feasible());
    CHECK(in_units.value().best == in_fractions.value().best);
    CHECK(in_fractions.value().best_result.iteration_time == in_units.value().best_result.iteration_time * unit);
  }
}
