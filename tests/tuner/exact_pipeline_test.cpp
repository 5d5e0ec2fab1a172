// The exact pipeline solver against what is known independently: on two identical stages with
// F = B = W the last device cannot start before F and has m(F+B+W) of work, and ZB-H1's closed form
// m(F+B+W) + (p-1)(F+B-W) meets that bound, so both are the optimum; the co-tuner searches a part
// of the same space, so the optimum is never above it; a memory limit is never exceeded; where
// memory binds, recomputation reaches a closed form the plain search cannot.
#include <catch2/catch.hpp>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <random>

#include "sim/pipeline_evaluator.hpp"
#include "tuner/pipeline/exact_pipeline.hpp"
#include "tuner/pipeline/pipeline_tuner.hpp"
#include "pipeline_fixtures.hpp"

using namespace gantry;

namespace {

std::unique_ptr<StageSource> layers_of(std::vector<double> time, int devices, double comm = 0, double max_mem = 0) {
  testing::LayerSourceOptions o;
  o.comm = comm;
  o.held = 0.5;
  o.max_mem = max_mem;
  o.method = PartitionMethod::compute;
  return testing::layer_source(std::move(time), devices, o);
}

// Two devices of `time` layers (F = B = W = time, parameters 1 and activation 1 per layer, B frees
// it all) within `max_mem` each.
std::unique_ptr<StageSource> memory_bound_layers(const std::vector<double>& time, double max_mem) {
  testing::LayerSourceOptions o;
  o.held = 0;
  o.params = 1;
  o.max_mem = max_mem;
  return testing::layer_source(time, 2, o);
}

// The branch and bound's optimum with up to two stages per device, which must finish and fit.
double optimum_of(const StageSource& source, int m) {
  ExactPipelineOptions options;
  options.max_chunks = 2;
  auto exact = exact_pipeline(source, m, options);
  REQUIRE(exact);
  REQUIRE(exact.value().finished);
  REQUIRE(exact.value().found);
  return exact.value().iteration_time;
}

// The co-tuner's time from `layouts` (up to two stages per device), which must fit.
double tuned_time(const StageSource& source, int m, const std::vector<StageLayout>& layouts) {
  CandidateEvaluator evaluator(source, m);
  PipelineTuneOptions tune;
  tune.max_chunks = 2;
  std::vector<PipelineCandidate> starts;
  for (StageLayout layout : layouts) starts.push_back(layout_candidate(source, layout).value());
  auto tuned = tune_pipeline(evaluator, starts, tune);
  REQUIRE(tuned);
  REQUIRE(tuned.value().best_result.feasible());
  return tuned.value().best_result.iteration_time;
}

}  // namespace

TEST_CASE("exact pipeline: two identical stages reach the last device's bound 3m + 1", "[tuner][pipeline]") {
  auto source = layers_of({1, 1}, 2);
  for (int m : {2, 3, 4, 6}) {  // m >= p: for m = 1 the chain F F B B W alone takes 5
    ExactPipelineOptions options;
    options.max_chunks = 1;
    auto r = exact_pipeline(*source, m, options);
    REQUIRE(r);
    INFO("m=" << m);
    CHECK(r.value().finished);
    REQUIRE(r.value().found);
    CHECK(r.value().iteration_time == Approx(3.0 * m + 1));
    // The scheme it returns runs in that time.
    auto e = PipelineEvaluator::compile(r.value().scheme);
    REQUIRE(e);
    StageCosts costs = source->costs_of(r.value().scheme, "test").value();
    CHECK(e.value().evaluate(r.value().scheme, costs).value().iteration_time == Approx(3.0 * m + 1));
  }
}

TEST_CASE("exact pipeline: never above the co-tuner, and within the memory limit", "[tuner][pipeline]") {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 6; ++trial) {
    std::vector<double> time;
    for (int i = 0; i < 4; ++i) time.push_back(std::uniform_real_distribution<double>(0.5, 2)(rng));
    const double limit = trial % 2 ? 4.0 : 0.0;
    auto source = layers_of(time, 2, 0.1, limit);
    const int m = 2 + trial % 2;
    CandidateEvaluator evaluator(*source, m);
    std::vector<PipelineCandidate> starts;
    for (StageLayout layout : {StageLayout{1, false}, StageLayout{2, true}}) starts.push_back(layout_candidate(*source, layout).value());
    PipelineTuneOptions tune;
    tune.max_chunks = 2;
    auto tuned = tune_pipeline(evaluator, starts, tune);
    REQUIRE(tuned);
    ExactPipelineOptions options;  // no upper bound: the search owes the tuner nothing
    options.max_chunks = 2;
    options.time_limit_seconds = 30;
    auto exact = exact_pipeline(*source, m, options);
    REQUIRE(exact);
    INFO("trial " << trial);
    REQUIRE(exact.value().finished);
    REQUIRE(exact.value().found == tuned.value().best_result.feasible());
    if (!exact.value().found) continue;
    CHECK(exact.value().iteration_time <= tuned.value().best_result.iteration_time + 1e-9);
    StageCosts costs = source->costs_of(exact.value().scheme, "test").value();
    auto e = PipelineEvaluator::compile(exact.value().scheme);
    REQUIRE(e);
    const PipelineEvaluation r = e.value().evaluate(exact.value().scheme, costs).value();
    CHECK(r.iteration_time == Approx(exact.value().iteration_time));
    CHECK_FALSE(r.out_of_memory);
  }
}

// Two devices, one layer each (F = B = W = 1), an activation of 1 per microbatch that B frees, and
// room for 1.5 on each device: one activation at a time, so each microbatch's F, F, B, B chain
// (4) runs alone and the last W follows, 4m + 1. With recomputation on the first device (it keeps
// an input of 0.25 from F to B, and its B takes F + B = 2 with the activation rebuilt) that device
// holds three microbatches (0.75 + the 0.75 rebuilt) and is never idle: its work, 4m, by the order
// F F F B F B B B W W W W (m = 4). Recomputing the second device alone keeps the first one's limit
// (5 a microbatch), and both start the second device late (4m + 1).
TEST_CASE("exact pipeline: recomputation where memory binds, against the closed forms 4m + 1 and 4m", "[tuner][pipeline]") {
  testing::LayerSourceOptions o;
  o.max_mem = 1.5;
  o.input = 0.25;
  auto source = testing::layer_source({1, 1}, 2, o);
  const int m = 4;
  ExactPipelineOptions options;
  options.max_chunks = 1;
  options.recompute = false;
  auto plain = exact_pipeline(*source, m, options);
  REQUIRE(plain);
  REQUIRE(plain.value().finished);
  REQUIRE(plain.value().found);
  CHECK(plain.value().iteration_time == Approx(4.0 * m + 1));
  CHECK(plain.value().scheme.recompute.empty());

  options.recompute = true;
  auto r = exact_pipeline(*source, m, options);
  REQUIRE(r);
  REQUIRE(r.value().finished);
  REQUIRE(r.value().found);
  CHECK(r.value().iteration_time == Approx(4.0 * m));
  const PipelineScheme& scheme = r.value().scheme;
  REQUIRE(scheme.recompute.size() == 1);
  CHECK(scheme.placement[scheme.recompute[0]] == scheme.placement[0]);  // the first stage's device
  // The scheme it returns runs in that time within the limit.
  StageCosts costs = source->costs_of(scheme, "test").value();
  auto e = PipelineEvaluator::compile(scheme);
  REQUIRE(e);
  const PipelineEvaluation run = e.value().evaluate(scheme, costs).value();
  CHECK(run.iteration_time == Approx(4.0 * m));
  CHECK_FALSE(run.out_of_memory);

  // The co-tuner searches a part of the same space and reaches the optimum by its recompute move.
  CandidateEvaluator evaluator(*source, m);
  PipelineTuneOptions tune;
  tune.max_chunks = 1;
  auto tuned = tune_pipeline(evaluator, {layout_candidate(*source, StageLayout{1, false}).value()}, tune);
  REQUIRE(tuned);
  CHECK(tuned.value().best_result.iteration_time == Approx(4.0 * m));

  // Without a memory limit recomputation cannot help and is not searched: the closed form 3m + 1.
  o.max_mem = 0;
  auto free = exact_pipeline(*testing::layer_source({1, 1}, 2, o), m, options);
  REQUIRE(free);
  CHECK(free.value().iteration_time == Approx(3.0 * m + 1));
  CHECK(free.value().scheme.recompute.empty());
}

namespace {

// Every scheme the list scheduler's rules give for a model (every partition, map of up to two
// stages per device, warm-up depths up to 2m and rule), the fastest that fits, by the memory rule.
double best_list_schedule(const StageSource& source, int layers, int devices, int m, MemoryReserve reserve) {
  CandidateEvaluator evaluator(source, m);
  double best = std::numeric_limits<double>::infinity();
  for (int stages = devices; stages <= std::min(layers, 2 * devices); ++stages) {
    std::vector<std::vector<int>> maps;
    for (int code = 0; code < (1 << stages); ++code) {  // two devices: a bit per stage
      std::vector<int> map;
      for (int s = 0; s < stages; ++s) map.push_back(code >> s & 1);
      const int on_one = static_cast<int>(std::count(map.begin(), map.end(), 1));
      if (on_one >= 1 && on_one <= 2 && stages - on_one >= 1 && stages - on_one <= 2) maps.push_back(map);
    }
    testing::for_each_partition(layers, stages, [&](const Partition& partition) {
      for (const auto& map : maps)
        for (int a = 1; a <= 2 * m; ++a)
          for (int b = 1; b <= 2 * m; ++b)
            for (int flags = 0; flags < 8; ++flags) {
              PipelineCandidate c;
              c.partition = partition;
              c.placement = map;
              c.rules.in_flight_limit = {a, b};
              c.rules.f_before_b = flags & 1;
              c.rules.delay_w = flags & 2;
              c.rules.split_backward = flags & 4;
              c.rules.reserve = reserve;
              auto r = evaluator.evaluate(c);
              REQUIRE(r);
              if (r.value().feasible()) best = std::min(best, r.value().iteration_time);
            }
    });
  }
  return best;
}

// On three layers on two devices at m = 4: the best list schedule by `reaches` is the optimum,
// and by each of `miss` over 5% above it.
void check_only_reserve_reaches_optimum(const StageSource& source, MemoryReserve reaches, std::initializer_list<MemoryReserve> miss) {
  const int m = 4;
  const double optimum = optimum_of(source, m);
  CHECK(best_list_schedule(source, 3, 2, m, reaches) == Approx(optimum).epsilon(1e-9));
  for (MemoryReserve reserve : miss) CHECK(best_list_schedule(source, 3, 2, m, reserve) > optimum * 1.05);
}

}  // namespace

// Three layers on two devices with two stages' parameters' worth of memory and a little more for
// activations: the optimum (branch and bound over every order) packs activations so that a
// microbatch's later F waits for an older one's W. Reserving on entry for what every microbatch
// held will still allocate, no rule reaches it; reserving for the new one only, one does.
TEST_CASE("exact pipeline: the list scheduler reaches the optimum of a memory-bound model only reserving for the new microbatch", "[tuner][pipeline]") {
  auto source = memory_bound_layers({0.6, 1.75, 1.05}, 5.95);
  check_only_reserve_reaches_optimum(*source, MemoryReserve::newcomer, {MemoryReserve::all});
}

// Three layers on two devices in a V (the first and last on device 0, which holds two layers'
// parameters and room for two activations under 4.9): the optimum admits a microbatch on device 0
// once the one before it has allocated all it will there, before that one's B frees its first
// stage, so the new microbatch's later F waits for that B. Reserving room for that later F
// holds the new microbatch back a whole B and W; reserving for the held microbatches only, one
// rule reaches the optimum, and so does the co-tuner (29.3 with the other two reserves, 24.2).
// On 66 generated models like it (3-4 layers, limits 4-5.4, m = 4) the tuner reached the optimum
// on 58 with the held reserve (mean gap 0.22%) and on 37 without (1.67%).
TEST_CASE("exact pipeline: the list scheduler reaches a memory-bound optimum reserving for the held microbatches only", "[tuner][pipeline]") {
  auto source = memory_bound_layers({0.90, 1.80, 0.85}, 4.9);
  check_only_reserve_reaches_optimum(*source, MemoryReserve::held, {MemoryReserve::newcomer, MemoryReserve::all});
  CHECK(tuned_time(*source, 4, {{1, false}}) == Approx(optimum_of(*source, 4)).epsilon(1e-9));
}

// Three layers on two devices whose memory (4.8: each layer's parameters 1, its activation 1 per
// microbatch) binds: the optimum puts an F off past the B and W that free its room, one later
// reinsertion of a task where earlier ones need several moves each slower on its own (the tuner
// ended at 26.8 with earlier reinsertions alone).
TEST_CASE("exact pipeline: the co-tuner reaches a memory-bound optimum that puts an F off", "[tuner][pipeline]") {
  auto source = memory_bound_layers({0.6, 1.5, 0.8}, 4.8);
  CHECK(tuned_time(*source, 4, {{1, false}}) == Approx(optimum_of(*source, 4)).epsilon(1e-9));
}

// Four layers on two devices whose memory (4.4) binds: the best scheme by the list scheduler's
// rules is not the one whose orders can be packed best, so every layout's settled scheme gets its
// own order descent (the tuner ended at 49.5, 19.6% above the optimum, with the best's alone). On
// 55 generated models like these two (3-4 layers, limits 4-5.4), the tuner reached the optimum on
// 29 (mean gap 1.73%) against 23 (3.32%) with the best's order descent alone and 18 (4.51%)
// before later reinsertions.
TEST_CASE("exact pipeline: the co-tuner reaches a memory-bound optimum through another layout's orders", "[tuner][pipeline]") {
  auto source = memory_bound_layers({1.15, 1.95, 1.10, 1.60}, 4.4);
  CHECK(tuned_time(*source, 4, {{1, false}, {2, true}}) == Approx(optimum_of(*source, 4)).epsilon(1e-9));
}
