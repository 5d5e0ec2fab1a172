// The bubble-aware tuner's phases on constructed cases whose best answer is known independently
// (a brute-force partition, the zero-bubble closed form, a memory limit, the exact solver's
// optimum), and its guarantees on random models: never slower than its start, never over the
// memory limit when the start fits.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <random>
#include <set>
#include <string>

#include "sim/pipeline_simulation.hpp"
#include "tuner/pipeline/exact_pipeline.hpp"
#include "tuner/pipeline/pipeline_tuner.hpp"
#include "pipeline_fixtures.hpp"

using namespace gantry;

namespace {

// Layers with F = B = W = time[i], one unit of activation per layer held from F to B, no
// transfers, and `max_mem` units of memory per device.
std::unique_ptr<StageSource> memory_limited_source(std::vector<double> time, int devices, double max_mem) {
  testing::LayerSourceOptions o;
  o.max_mem = max_mem;
  return testing::layer_source(std::move(time), devices, o);
}

PipelineCandidate plain(const Partition& partition, int devices) {
  PipelineCandidate c;
  c.partition = partition;
  for (int d = 0; d < devices; ++d) c.placement.push_back(d);
  c.rules = default_rules(c.placement, devices);
  return c;
}

}  // namespace

TEST_CASE("pipeline tuner, partition phase: an imbalanced partition is balanced", "[tuner][pipeline]") {
  // Layers 1, 1, 1, 5 on two devices: [1 | 1 1 5] and [1 1 | 1 5] leave device 1 the bottleneck;
  // the brute force over the three cuts gives [1 1 1 | 5].
  auto source = testing::layer_source({1, 1, 1, 5}, 2);
  CandidateEvaluator evaluator(*source, 8);
  PipelineTuneOptions options;
  options.max_chunks = 1;  // the partition phase alone changes stage sizes
  auto r = tune_pipeline(evaluator, {plain({{0, 1}, {1, 4}}, 2)}, options);
  REQUIRE(r);
  CHECK(r.value().best.partition == Partition{{0, 3}, {3, 4}});
  CHECK(r.value().best_result.iteration_time < r.value().start_result.iteration_time);
}

TEST_CASE("pipeline tuner, schedule phase: delaying W fills 1F1B's bubble (the ZB-H1 closed form)", "[tuner][pipeline]") {
  // p = 4 identical stages, F = B = W = 1, 8 microbatches; memory for 1F1B's p - d activations
  // on device d, so deeper warm-ups do not fit. W at once is 1F1B's schedule with a split B; the
  // tuner must find ZB-H1's m(F+B+W) + (p-1)(F+B-W) = 27.
  const int p = 4, m = 8;
  auto source = testing::layer_source({1, 1, 1, 1}, p);
  CandidateEvaluator evaluator(*source, m);
  PipelineCandidate start = plain({{0, 1}, {1, 2}, {2, 3}, {3, 4}}, p);
  start.rules.delay_w = false;
  PipelineTuneOptions options;
  options.max_chunks = 1;
  // No memory limit here; the in-flight limits stay as the start has them unless they help.
  auto r = tune_pipeline(evaluator, {start}, options);
  REQUIRE(r);
  const double zb_h1 = m * 3.0 + (p - 1) * 1.0;
  CHECK(r.value().start_result.iteration_time > zb_h1);
  CHECK(r.value().best_result.iteration_time <= zb_h1 + 1e-9);
  // Whatever it found is no better than the bound of the work on the busiest device.
  CHECK(r.value().best_result.iteration_time >= m * 3.0 - 1e-9);
}

TEST_CASE("pipeline tuner: a scheme over the memory limit is repaired by holding F back and running W", "[tuner][pipeline]") {
  // GPipe-like start: every F first (no memory rule, unlimited in flight) needs m activations;
  // the limit allows 3.
  const int p = 2, m = 8;
  auto source = memory_limited_source({1, 1}, p, 3.0);
  CandidateEvaluator evaluator(*source, m);
  PipelineCandidate start = plain({{0, 1}, {1, 2}}, p);
  start.rules.respect_memory = false;
  start.rules.in_flight_limit = {m, m};
  auto first = evaluator.evaluate(start);
  REQUIRE(first);
  REQUIRE(first.value().evaluation.out_of_memory);
  PipelineTuneOptions options;
  options.max_chunks = 1;
  auto r = tune_pipeline(evaluator, {start}, options);
  REQUIRE(r);
  const PipelineEvaluation& e = r.value().best_result.evaluation;
  REQUIRE(e.completed);
  CHECK_FALSE(e.out_of_memory);
  for (double peak : e.peak_memory) CHECK(peak <= 3.0 + 1e-9);
}

TEST_CASE("pipeline tuner: never slower than its start, never over the limit when the start fits", "[tuner][pipeline]") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 12; ++trial) {
    const int p = std::uniform_int_distribution<int>(2, 4)(rng), layers = std::uniform_int_distribution<int>(2 * p, 12)(rng);
    const int m = std::uniform_int_distribution<int>(p, 3 * p)(rng);
    std::vector<double> time;
    for (int i = 0; i < layers; ++i) time.push_back(std::uniform_real_distribution<double>(0.2, 2.0)(rng));
    const double limit = std::uniform_real_distribution<double>(2.0, 3.0)(rng) * layers / p * p;
    auto source = memory_limited_source(time, p, limit);
    CandidateEvaluator evaluator(*source, m);
    auto start = layout_candidate(*source, {1, false});
    REQUIRE(start);
    PipelineTuneOptions options;
    options.max_chunks = 2;
    auto r = tune_pipeline(evaluator, {start.value()}, options);
    REQUIRE(r);
    INFO("trial " << trial);
    const CandidateResult& before = r.value().start_result;
    const CandidateResult& after = r.value().best_result;
    CHECK(after.iteration_time <= before.iteration_time);
    if (before.feasible()) {
      CHECK(after.feasible());
      // The full simulator agrees with the search's evaluator on the tuned scheme.
      auto built = evaluator.build(r.value().best);
      REQUIRE(built);
      auto full = simulate_pipeline(built.value().first, built.value().second);
      REQUIRE(full);
      CHECK(full.value().iteration_time == Approx(after.iteration_time));
      CHECK_FALSE(full.value().out_of_memory);
    }
  }
}

TEST_CASE("pipeline tuner: a stop request returns the best so far", "[tuner][pipeline]") {
  auto source = testing::layer_source({1, 2, 1, 3, 1, 2, 2, 1}, 2);
  CandidateEvaluator evaluator(*source, 6);
  std::atomic<int> polls{0};  // should_stop may be polled by the walk's thread too
  PipelineTuneOptions options;
  options.should_stop = [&polls] { return ++polls > 40; };
  auto r = tune_pipeline(evaluator, {layout_candidate(*source, {1, false}).value()}, options);
  REQUIRE(r);
  CHECK(r.value().stopped);
  CHECK_FALSE(r.value().budget_ended);
  CHECK(r.value().best_result.iteration_time <= r.value().start_result.iteration_time);
  CHECK(r.value().evaluations < 60);  // it stopped early, not after a full pass
}

TEST_CASE("pipeline tuner: the walk beside the kicks is the walk after them", "[tuner][pipeline]") {
  // Without an evaluation budget the walk runs on a thread of its own while the kicks run; with
  // one, after them. Both must find the same and count the same evaluations.
  auto source = testing::layer_source({1, 2, 1, 3, 1, 2, 2, 1, 3, 1}, 3);
  const PipelineCandidate start = layout_candidate(*source, {1, false}).value();
  for (std::uint64_t seed : {1, 2, 3}) {
    PipelineTuneOptions options;
    options.seed = seed;
    CandidateEvaluator beside_evaluator(*source, 6);
    auto beside = tune_pipeline(beside_evaluator, {start}, options);
    options.max_evaluations = 1'000'000'000;
    CandidateEvaluator after_evaluator(*source, 6);
    auto after = tune_pipeline(after_evaluator, {start}, options);
    REQUIRE(beside);
    REQUIRE(after);
    CHECK(beside.value().evaluations == after.value().evaluations);
    CHECK(beside.value().best == after.value().best);
    CHECK(beside.value().best_result.iteration_time == after.value().best_result.iteration_time);
    CHECK(beside.value().history.back().phase == after.value().history.back().phase);
    // The walk's evaluations are counted: a tuning without it takes fewer.
    options.anneal_share = 0;
    CandidateEvaluator without_evaluator(*source, 6);
    auto without = tune_pipeline(without_evaluator, {start}, options);
    REQUIRE(without);
    CHECK(without.value().evaluations < beside.value().evaluations);
  }
}

TEST_CASE("pipeline tuner: progress within long phases, each report ahead of its phase's end", "[tuner][pipeline]") {
  auto source = testing::layer_source({1, 2, 1, 3, 1, 2, 2, 1}, 2);
  CandidateEvaluator evaluator(*source, 6);
  std::vector<PipelineTuneProgress> seen;
  PipelineTuneOptions options;
  options.on_progress = [&seen](const PipelineTuneProgress& p) { seen.push_back(p); };
  options.progress_seconds = 0;  // at every chance
  // An evaluation budget keeps the walk after the kicks, on this thread, where it reports as it
  // goes (beside the kicks it reports through theirs).
  options.max_evaluations = 1'000'000'000;
  auto r = tune_pipeline(evaluator, {layout_candidate(*source, {1, false}).value()}, options);
  REQUIRE(r);
  const auto& history = r.value().history;
  std::vector<PipelineTuneProgress> ends;
  std::copy_if(seen.begin(), seen.end(), std::back_inserter(ends), [](const auto& p) { return !p.running; });
  CHECK(ends.size() == history.size());  // phase ends only in the history
  std::set<std::string> running_phases;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (i > 0) CHECK(seen[i].evaluations >= seen[i - 1].evaluations);
    if (!seen[i].running) continue;
    running_phases.insert(seen[i].phase);
    // A phase reports as running before it ends: the next end is the same phase and pass.
    auto end = std::find_if(seen.begin() + i, seen.end(), [](const auto& p) { return !p.running; });
    REQUIRE(end != seen.end());
    CHECK(end->phase == seen[i].phase);
    CHECK(end->pass == seen[i].pass);
  }
  for (const char* phase : {"partition", "placement", "schedule", "order", "kick", "anneal"})
    CHECK(running_phases.count(phase) == 1);
  // With reports within phases put off for ever, only the phases' ends come.
  std::vector<PipelineTuneProgress> quiet;
  options.progress_seconds = 1e9;
  options.on_progress = [&quiet](const PipelineTuneProgress& p) { quiet.push_back(p); };
  CandidateEvaluator again(*source, 6);
  auto q = tune_pipeline(again, {layout_candidate(*source, {1, false}).value()}, options);
  REQUIRE(q);
  CHECK(quiet.size() == q.value().history.size());
}

TEST_CASE("pipeline tuner: an evaluation budget ends it with its best so far", "[tuner][pipeline]") {
  auto source = testing::layer_source({1, 2, 1, 3, 1, 2, 2, 1}, 2);
  CandidateEvaluator evaluator(*source, 6);
  PipelineTuneOptions options;
  options.max_evaluations = 50;
  auto r = tune_pipeline(evaluator, {layout_candidate(*source, {1, false}).value()}, options);
  REQUIRE(r);
  CHECK(r.value().budget_ended);
  CHECK_FALSE(r.value().stopped);
  // Between two budget checks a phase evaluates at most a few candidates (a layout's start, a
  // task-move step's own timing).
  CHECK(r.value().evaluations <= 50 + 4);
  CHECK(r.value().best_result.iteration_time <= r.value().start_result.iteration_time);
}

TEST_CASE("pipeline tuner: moves evaluated elsewhere lead to the same scheme; a failure there ends with the best so far",
          "[tuner][pipeline]") {
  auto source = testing::layer_source({1, 3, 1, 2, 2, 1, 4, 1, 1, 2, 3, 1}, 4);
  const PipelineCandidate start = plain({{0, 3}, {3, 6}, {6, 9}, {9, 12}}, 4);
  // Runs the tuner with its steps of `min_tasks` tasks or more sent elsewhere, against the tuner
  // alone; returns the evaluations done when the first step was sent (-1: none was).
  auto check = [&](std::int64_t budget, std::size_t min_tasks) -> std::int64_t {
    INFO("budget " << budget << ", steps of " << min_tasks << " tasks or more elsewhere");
    CandidateEvaluator alone(*source, 8);
    PipelineTuneOptions options;
    options.max_chunks = 2;
    options.max_evaluations = budget;
    auto expected = tune_pipeline(alone, {start}, options);
    REQUIRE(expected);

    CandidateEvaluator here(*source, 8), elsewhere(*source, 8);
    long batches = 0;
    std::int64_t first_sent = -1;
    std::size_t smallest = SIZE_MAX;  // tasks of the smallest step sent
    options.min_tasks_elsewhere = min_tasks;
    options.evaluate_moves = [&](const std::vector<PipelineCandidate>& moves) {
      if (batches++ == 0) first_sent = here.evaluations() + elsewhere.evaluations();
      std::size_t tasks = 0;
      for (const PipelineCandidate& m : moves) tasks += 3 * m.placement.size() * 8;  // F, B, W per stage and microbatch
      smallest = std::min(smallest, tasks);
      std::vector<std::optional<CandidateResult>> out;
      for (const PipelineCandidate& m : moves) {
        auto r = elsewhere.evaluate(m);
        out.push_back(r ? std::optional<CandidateResult>(r.value()) : std::nullopt);
      }
      return Result<std::vector<std::optional<CandidateResult>>>(out);
    };
    auto r = tune_pipeline(here, {start}, options);
    REQUIRE(r);
    if (batches > 0) CHECK(smallest >= min_tasks);  // smaller steps (or what the budget left of them) stayed here
    CHECK(r.value().best == expected.value().best);
    CHECK(r.value().best_result.iteration_time == expected.value().best_result.iteration_time);
    CHECK(r.value().evaluations == expected.value().evaluations);
    if (budget > 0) CHECK(r.value().evaluations <= budget);
    CHECK(r.value().failure.empty());
    return first_sent;
  };
  const std::size_t threshold = 8192;  // some of this model's steps have that many tasks, some fewer
  for (std::int64_t budget : {0, 37}) CHECK(check(budget, 0) >= 0);
  const std::int64_t first_large = check(0, threshold);
  REQUIRE(first_large >= 0);  // the order phase's steps are large enough
  // A budget that ends 3 moves into that step: what is left of it (3 x 192 tasks) stays here.
  check(first_large + 3, threshold);

  CandidateEvaluator here(*source, 8), elsewhere(*source, 8);
  PipelineTuneOptions failing;
  failing.min_tasks_elsewhere = 0;
  long calls = 0;
  failing.evaluate_moves = [&](const std::vector<PipelineCandidate>& moves) -> Result<std::vector<std::optional<CandidateResult>>> {
    if (++calls > 3) return make_error("worker lost");
    std::vector<std::optional<CandidateResult>> out;
    for (const PipelineCandidate& m : moves) out.push_back(elsewhere.evaluate(m).value());
    return out;
  };
  auto r = tune_pipeline(here, {start}, failing);
  REQUIRE(r);
  CHECK(r.value().failure == "worker lost");
  CHECK(calls == 4);  // nothing more was asked after the failure
  CHECK(r.value().best_result.iteration_time <= r.value().start_result.iteration_time);
}

// A tuned scheme whose memory setting (recomputation, offload) bought its speed: the event
// simulator agrees that it fits `limit` and on its time, and the candidate round-trips through
// the stored form and the scheme through its file (--save-scheme, then --scheme) with the same
// time and memory. Returns the saved scheme.
PipelineScheme check_tuned_memory_scheme(CandidateEvaluator& evaluator, const StageSource& source,
                                         const PipelineTuneResult& tuned, double limit) {
  auto built = evaluator.build(tuned.best);
  REQUIRE(built);
  auto sim = simulate_pipeline(built.value().first, built.value().second, {});
  REQUIRE(sim);
  for (double peak : sim.value().peak_memory) CHECK(peak <= limit + 1e-9);
  CHECK(sim.value().iteration_time == Approx(tuned.best_result.iteration_time));
  auto back = candidate_from_json(candidate_to_json(tuned.best), "test");
  REQUIRE(back);
  CHECK(back.value() == tuned.best);
  auto saved = scheme_from_json(scheme_to_json(built.value().first), "saved");
  REQUIRE(saved);
  CHECK(saved.value().recompute == tuned.best.recompute);
  CHECK(saved.value().offload == tuned.best.offload);
  auto loaded = load_pipeline(saved.value(), source, "saved");
  REQUIRE(loaded);
  auto again = simulate_pipeline(loaded.value().scheme, loaded.value().costs, {});
  REQUIRE(again);
  CHECK(again.value().iteration_time == sim.value().iteration_time);
  CHECK(again.value().peak_memory == sim.value().peak_memory);
  return saved.value();
}

TEST_CASE("pipeline tuner, memory: recomputation buys warm-up depth a tight limit denies", "[tuner][pipeline]") {
  // 4 devices, one layer each (F = B = W = 1), activation 1 per microbatch and a limit of 1.5: a
  // device holds one microbatch at a time, so the pipeline fills one microbatch per round trip.
  // Recomputing keeps the input (0.1) instead: a B costs 2 but many microbatches fit in flight.
  const int p = 4, m = 8;
  testing::LayerSourceOptions tight;
  tight.max_mem = 1.5;
  auto without = testing::layer_source({1, 1, 1, 1}, p, tight);
  tight.input = 0.1;
  auto with = testing::layer_source({1, 1, 1, 1}, p, tight);
  PipelineTuneOptions options;
  options.max_chunks = 1;
  const PipelineCandidate start = plain({{0, 1}, {1, 2}, {2, 3}, {3, 4}}, p);
  CandidateEvaluator a(*without, m), b(*with, m);
  auto held = tune_pipeline(a, {start}, options);
  auto recomputed = tune_pipeline(b, {start}, options);
  REQUIRE(held);
  REQUIRE(recomputed);
  REQUIRE(held.value().best_result.feasible());
  REQUIRE(recomputed.value().best_result.feasible());
  CHECK(held.value().best.recompute.empty());
  CHECK_FALSE(recomputed.value().best.recompute.empty());
  CHECK(recomputed.value().best_result.iteration_time < held.value().best_result.iteration_time);
  const PipelineScheme saved = check_tuned_memory_scheme(b, *with, recomputed.value(), 1.5);
  // Per-stage cost files cannot recompute; a stage that does not exist is named.
  auto file = stage_file_source(testing::uniform_stages(p, 1, 1, 1));
  PipelineScheme per_stage = saved;
  per_stage.partition.clear();
  CHECK_THAT(load_pipeline(per_stage, *file, "saved").error().message, Catch::Contains("saved: recompute: recomputation needs"));
  nlohmann::json text = nlohmann::json::parse(scheme_to_json(saved));
  text["recompute"] = {9};
  auto bad = scheme_from_json(text.dump(), "bad.json");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("bad.json: recompute: stage 9 does not exist (4 stages)"));
}

TEST_CASE("pipeline tuner, memory: offloading activations to host memory buys the depth a tight limit denies",
          "[tuner][pipeline]") {
  // 4 devices, one layer each (F = B = W = 1), activation 1 per microbatch, limit 2.5: without
  // offload device 0 holds 2 microbatches between F and B where 1F1B wants 4. With host links
  // fast enough (10 per unit of time), offloading part of each activation lets more fit; over
  // links 1000 times slower the copies would stall every B, and the tuner keeps none.
  const int p = 4, m = 8;
  auto no_link = testing::tight_four_layers(0);
  auto fast = testing::tight_four_layers(10);
  auto slow = testing::tight_four_layers(0.01);
  PipelineTuneOptions options;
  options.max_chunks = 1;
  const PipelineCandidate start = plain({{0, 1}, {1, 2}, {2, 3}, {3, 4}}, p);
  CandidateEvaluator a(*no_link, m), b(*fast, m), c(*slow, m);
  auto held = tune_pipeline(a, {start}, options);
  auto offloaded = tune_pipeline(b, {start}, options);
  auto slowly = tune_pipeline(c, {start}, options);
  REQUIRE(held);
  REQUIRE(offloaded);
  REQUIRE(slowly);
  REQUIRE(held.value().best_result.feasible());
  REQUIRE(offloaded.value().best_result.feasible());
  CHECK(held.value().best.offload.empty());
  CHECK_FALSE(offloaded.value().best.offload.empty());
  CHECK(offloaded.value().best_result.iteration_time < held.value().best_result.iteration_time);
  CHECK(slowly.value().best.offload.empty());
  CHECK(slowly.value().best_result.iteration_time == held.value().best_result.iteration_time);
  const PipelineScheme saved = check_tuned_memory_scheme(b, *fast, offloaded.value(), 2.5);
  CHECK(saved.reload_ahead == offloaded.value().best.reload_ahead);
  // Without host links (a cluster without host_gbs, a stage file) the scheme is refused, by name.
  CHECK_THAT(load_pipeline(saved, *no_link, "saved").error().message,
             Catch::Contains("saved: offload: stage 0's device has no host bandwidth"));
  auto file = stage_file_source(testing::uniform_stages(p, 1, 1, 1));
  PipelineScheme per_stage = saved;
  per_stage.partition.clear();
  CHECK_THAT(load_pipeline(per_stage, *file, "saved").error().message, Catch::Contains("saved: offload: activation offload needs"));
  nlohmann::json text = nlohmann::json::parse(scheme_to_json(saved));
  text["offload"] = {0, 0, 0, 1.5};
  auto bad = scheme_from_json(text.dump(), "bad.json");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("bad.json: offload: stage 3's fraction must be between 0 and 1"));
}

// Six layers on three devices (transfers 0.2, half the activation held from B to W) whose
// optimum, the exact solver's, the descents from the plain and V layouts miss by over 5% and the
// kicks reach (within 0.5%); `optimum_stages` checks the optimum's stage count.
namespace {
template <typename StageCheck>
void check_kicks_reach_optimum(const std::vector<double>& time, int microbatches, StageCheck optimum_stages) {
  testing::LayerSourceOptions o;
  o.comm = 0.2;
  o.held = 0.5;
  o.method = PartitionMethod::compute;
  auto source = testing::layer_source(time, 3, o);
  ExactPipelineOptions exact_options;
  exact_options.max_chunks = 2;
  exact_options.time_limit_seconds = 60;
  auto exact = exact_pipeline(*source, microbatches, exact_options);
  REQUIRE(exact);
  REQUIRE(exact.value().finished);
  const std::size_t stages = exact.value().scheme.placement.size();
  INFO("layers " << time[0] << "...: optimum " << exact.value().iteration_time << " with " << stages << " stages");
  CHECK(optimum_stages(stages));
  auto tuned = [&](double kick_share) {
    CandidateEvaluator evaluator(*source, microbatches);
    std::vector<PipelineCandidate> starts;
    for (StageLayout layout : {StageLayout{1, false}, StageLayout{2, true}}) starts.push_back(layout_candidate(*source, layout).value());
    PipelineTuneOptions options;
    options.max_chunks = 2;
    options.anneal_share = 0;
    options.kick_share = kick_share;
    return tune_pipeline(evaluator, starts, options).value().best_result.iteration_time;
  };
  CHECK(tuned(0) > 1.05 * exact.value().iteration_time);  // else this case no longer needs the kicks
  CHECK(tuned(2) == Approx(exact.value().iteration_time).epsilon(0.005));
}
}  // namespace

TEST_CASE("pipeline tuner, kicks: stage-to-device maps no layout has, out of the descents' basins", "[tuner][pipeline]") {
  // The optimum puts the stages on a map that is neither plain, interleaved nor V, which the
  // descents from the layouts do not reach; kicks (a swap of two stages' devices among them) do.
  const auto any = [](std::size_t) { return true; };
  check_kicks_reach_optimum({0.909, 2.720, 2.531, 0.551, 2.702, 2.227}, 5, any);
  check_kicks_reach_optimum({1.495, 2.724, 0.487, 1.667, 1.555, 2.133}, 6, any);
  check_kicks_reach_optimum({0.498, 1.469, 1.714, 1.124, 2.795, 2.333}, 6, any);
}

TEST_CASE("pipeline tuner, kicks: stage counts no layout has", "[tuner][pipeline]") {
  // The optimum has four or five stages: one or two devices run two, which neither the plain (3)
  // nor the V (6) layout has. Kicks that split or merge a stage reach it.
  const auto uneven = [](std::size_t stages) { return stages % 3 != 0; };
  check_kicks_reach_optimum({1.245, 0.465, 1.981, 0.654, 2.077, 3.0}, 4, uneven);
  check_kicks_reach_optimum({1.428, 0.416, 0.454, 2.43, 1.372, 2.979}, 5, uneven);
  check_kicks_reach_optimum({0.802, 1.325, 0.531, 1.0, 2.115, 2.422}, 5, uneven);
}
