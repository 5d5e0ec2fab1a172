// The candidate evaluator remembers stage costs and results: what it answers for a candidate it
// has seen must be what simulating that candidate afresh gives, however close the candidates it
// saw before (the same partition and placement with other rules, orders or recomputation).
#include <catch2/catch.hpp>
#include <algorithm>
#include <random>

#include "pipeline_fixtures.hpp"
#include "tuner/pipeline/pipeline_candidate.hpp"

using namespace gantry;

namespace {

// Candidates that share partitions and placements and differ in one field each: rules, warm-up
// depths, recomputation, an explicit order (another rule set's list schedule).
std::vector<PipelineCandidate> neighbours(const StageSource& source, CandidateEvaluator& evaluator) {
  std::vector<PipelineCandidate> out;
  for (StageLayout layout : {StageLayout{1, false}, StageLayout{2, true}, StageLayout{2, false}}) {
    auto base = layout_candidate(source, layout);
    REQUIRE(base);
    for (int variant = 0; variant < 48; ++variant) {
      PipelineCandidate c = base.value();
      c.rules.f_before_b = variant & 1;
      c.rules.delay_w = variant & 2;
      c.rules.split_backward = variant & 4;
      c.rules.respect_memory = variant & 8;
      c.rules.reserve = static_cast<MemoryReserve>(variant >> 4);
      out.push_back(c);
      for (int& limit : c.rules.in_flight_limit) limit = std::max(1, limit / 2);
      out.push_back(c);
      c.recompute = {0};
      out.push_back(c);
      c.recompute = {static_cast<int>(c.placement.size()) - 1, 0};  // unsorted: the same stages as sorted
      out.push_back(c);
    }
    // The same structure in the orders of other rules, as explicit orders.
    for (bool f_first : {true, false}) {
      PipelineCandidate ruled = base.value();
      ruled.rules.f_before_b = f_first;
      auto built = evaluator.build(ruled);
      REQUIRE(built);
      PipelineCandidate ordered = base.value();
      ordered.order = built.value().first.schedule;
      out.push_back(ordered);
    }
    if (base.value().partition.size() > 1) {  // a neighbouring partition
      PipelineCandidate shifted = base.value();
      if (shift_boundaries(shifted.partition, 0, 1, -1)) out.push_back(shifted);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("candidate evaluator: a remembered answer is the simulation's, and repeats are counted", "[tuner][pipeline]") {
  std::mt19937 rng(11);
  int differing_pairs = 0;
  for (int trial = 0; trial < 6; ++trial) {
    INFO("trial " << trial);
    const int p = std::uniform_int_distribution<int>(2, 4)(rng), m = std::uniform_int_distribution<int>(p, 2 * p)(rng);
    std::vector<double> time;
    for (int i = 0; i < 4 * p; ++i) time.push_back(std::uniform_real_distribution<double>(0.2, 2.0)(rng));
    testing::LayerSourceOptions o;
    o.max_mem = std::uniform_real_distribution<double>(6, 20)(rng);  // binds sometimes
    o.input = 0.2;                                                    // recomputation possible
    o.held = 0.5;
    auto source = testing::layer_source(time, p, o);
    CandidateEvaluator remembering(*source, m);
    const std::vector<PipelineCandidate> candidates = neighbours(*source, remembering);
    const std::int64_t before = remembering.evaluations(), simulated_before = remembering.simulations();
    // Every candidate three times, interleaved, so that each is asked after its neighbours.
    std::vector<std::size_t> asks;
    for (int round = 0; round < 3; ++round)
      for (std::size_t i = 0; i < candidates.size(); ++i) asks.push_back(i);
    std::shuffle(asks.begin(), asks.end(), rng);
    for (const PipelineCandidate& c : candidates) {  // as the store keeps them (stages sorted)
      auto back = candidate_from_json(candidate_to_json(c), "test");
      REQUIRE(back);
      if (std::is_sorted(c.recompute.begin(), c.recompute.end())) CHECK(back.value() == c);
    }
    for (std::size_t i : asks) {
      INFO("candidate " << i << ": " << candidate_to_json(candidates[i]));
      auto remembered = remembering.evaluate(candidates[i]);
      CandidateEvaluator fresh(*source, m);
      auto simulated = fresh.evaluate(candidates[i]);
      REQUIRE(remembered);
      REQUIRE(simulated);
      const PipelineEvaluation &a = remembered.value().evaluation, &b = simulated.value().evaluation;
      CHECK(a.completed == b.completed);
      CHECK(a.out_of_memory == b.out_of_memory);
      CHECK(remembered.value().iteration_time == Approx(simulated.value().iteration_time));
      CHECK(a.peak_memory == b.peak_memory);
      CHECK(a.busy == b.busy);
    }
    CHECK(remembering.evaluations() - before == static_cast<std::int64_t>(asks.size()));
    // Each distinct candidate was simulated once (the memory holds them all here); repeats were
    // answered from memory.
    std::size_t distinct = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i)
      distinct += std::none_of(candidates.begin(), candidates.begin() + i, [&](const PipelineCandidate& c) { return c == candidates[i]; });
    CHECK(remembering.simulations() - simulated_before == static_cast<std::int64_t>(distinct));
    // The field that tells neighbours apart matters: some pairs simulate to different times.
    for (std::size_t i = 0; i + 1 < candidates.size(); ++i) {
      CandidateEvaluator fresh(*source, m);
      differing_pairs += fresh.evaluate(candidates[i]).value().iteration_time !=
                         fresh.evaluate(candidates[i + 1]).value().iteration_time;
    }
    // Asked for start times, it simulates again and gives them; asked again without, it answers
    // from memory, without them.
    auto with_starts = remembering.evaluate(candidates.front(), true);
    REQUIRE(with_starts);
    CHECK_FALSE(with_starts.value().evaluation.start.empty());
    const std::int64_t simulated = remembering.simulations();
    auto without = remembering.evaluate(candidates.front());
    REQUIRE(without);
    CHECK(without.value().evaluation.start.empty());
    CHECK(remembering.simulations() == simulated);
  }
  CHECK(differing_pairs >= 50);
}

TEST_CASE("pipeline candidate: the memory reserve reads by name, and a stored packing flag as newcomer", "[tuner][pipeline]") {
  const std::string head = R"({"partition": [[0, 1], [1, 2]], "placement": [0, 1], "in_flight_limit": [2, 1],
    "f_before_b": true, "split_backward": true, "delay_w": true, "respect_memory": true)";
  auto stored = candidate_from_json(head + R"(, "reserve_for_all": false})", "stored");
  REQUIRE(stored);
  CHECK(stored.value().rules.reserve == MemoryReserve::newcomer);
  auto held = candidate_from_json(head + R"(, "reserve": "held"})", "file");
  REQUIRE(held);
  CHECK(held.value().rules.reserve == MemoryReserve::held);
  auto plain = candidate_from_json(head + "}", "file");
  REQUIRE(plain);
  CHECK(plain.value().rules.reserve == MemoryReserve::all);
  auto bad = candidate_from_json(head + R"(, "reserve": "some"})", "file");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("file: reserve must be all, newcomer or held") != std::string::npos);
}
