// The pipeline list scheduler's rules against closed forms (1F1B's time and memory when B and W
// are fused under 1F1B's in-flight limits) and on any stage-to-device map the tuner may try, and
// its defining rule checked on the timeline of what it returns: a device never waits longer than
// for the earliest of the tasks it may run next; and its memory rule by what it guarantees: the
// simulated peaks of its orders stay within every device's limit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "pipeline_fixtures.hpp"
#include "sim/pipeline_evaluator.hpp"
#include "tuner/pipeline/list_scheduler.hpp"

using namespace gantry;
using testing::uniform_stages;

namespace {

PipelineScheme shape(std::vector<int> placement, int devices, int microbatches) {
  PipelineScheme s;
  s.num_microbatches = microbatches;
  s.placement = std::move(placement);
  s.schedule.resize(devices);
  return s;
}

PipelineScheme contiguous(int p, int m) {
  std::vector<int> placement;
  for (int d = 0; d < p; ++d) placement.push_back(d);
  return shape(placement, p, m);
}

PipelineEvaluation evaluate(const PipelineScheme& scheme, const StageCosts& costs) {
  REQUIRE(scheme.check());
  auto e = PipelineEvaluator::compile(scheme);
  REQUIRE(e);
  auto r = e.value().evaluate(scheme, costs);
  REQUIRE(r);
  REQUIRE(r.value().completed);
  return r.value();
}

// A random stage-to-device map in which every device has a stage.
std::vector<int> random_map(int stages, int devices, std::mt19937& rng) {
  std::vector<int> placement;
  for (int s = 0; s < stages; ++s) placement.push_back(s < devices ? s : std::uniform_int_distribution<int>(0, devices - 1)(rng));
  std::shuffle(placement.begin(), placement.end(), rng);
  return placement;
}

// A random case for the rules' properties: 2-5 devices, one to three stages each on a random
// map, uneven F/B/W, random warm-up depths, and the rules varied with `trial`.
struct RandomCase {
  int devices = 0, stages = 0, microbatches = 0;
  std::vector<int> placement;
  StageCosts costs;
  ListScheduleRules rules;
};

RandomCase random_case(std::mt19937& rng, int trial, int min_microbatches, int max_microbatches) {
  RandomCase c;
  c.devices = std::uniform_int_distribution<int>(2, 5)(rng);
  c.stages = std::uniform_int_distribution<int>(c.devices, 3 * c.devices)(rng);
  c.microbatches = std::uniform_int_distribution<int>(min_microbatches, max_microbatches)(rng);
  c.placement = random_map(c.stages, c.devices, rng);
  c.costs = uniform_stages(c.stages, 1.0, 1.5, 0.7, 0.3, 10, 3);
  std::uniform_real_distribution<double> scale(0.3, 2.0);
  for (int s = 0; s < c.stages; ++s) {
    c.costs.f[s] *= scale(rng);
    c.costs.b[s] *= scale(rng);
    c.costs.w[s] *= scale(rng);
  }
  for (int d = 0; d < c.devices; ++d) c.rules.in_flight_limit.push_back(std::uniform_int_distribution<int>(1, 2 * c.stages)(rng));
  c.rules.split_backward = trial % 3 != 0;
  c.rules.f_before_b = trial % 2 == 0;
  c.rules.delay_w = trial % 5 != 0;
  return c;
}

ListScheduleRules one_f_one_b_limits(int p) {
  ListScheduleRules rules;
  for (int d = 0; d < p; ++d) rules.in_flight_limit.push_back(p - d);
  return rules;
}

}  // namespace

TEST_CASE("list scheduler: fused BW under 1F1B's limits gives 1F1B's time and memory", "[tuner][pipeline]") {
  for (auto [p, m] : {std::pair{4, 8}, std::pair{4, 2}, std::pair{8, 32}, std::pair{3, 7}}) {
    INFO("p=" << p << " m=" << m);
    ListScheduleRules rules = one_f_one_b_limits(p);
    rules.split_backward = false;
    const StageCosts costs = uniform_stages(p, 1.0, 1.0, 1.0, 0, 10, 0);
    auto scheme = pipeline_list_schedule(contiguous(p, m), costs, rules);
    REQUIRE(scheme);
    const PipelineEvaluation r = evaluate(scheme.value(), costs);
    CHECK(r.iteration_time == Approx((m + p - 1) * 3.0));
    for (int d = 0; d < p; ++d) CHECK(r.peak_memory[d] == Approx(10.0 * std::min(p - d, m)));
  }
}

TEST_CASE("list scheduler: delaying W into bubbles beats running it at once", "[tuner][pipeline]") {
  const int p = 4, m = 8;
  const StageCosts costs = uniform_stages(p, 1.0, 1.0, 1.0, 0, 10, 0);
  ListScheduleRules delayed = one_f_one_b_limits(p), eager = delayed;
  eager.delay_w = false;
  const double t_delayed = evaluate(pipeline_list_schedule(contiguous(p, m), costs, delayed).value(), costs).iteration_time;
  const double t_eager = evaluate(pipeline_list_schedule(contiguous(p, m), costs, eager).value(), costs).iteration_time;
  // ZB-H1's closed form m(F+B+W) + (p-1)(F+B-W) for the delayed W; W at once keeps 1F1B's bubble
  // except that the gradient leaves after B, not after B and W: at most 1F1B's time.
  CHECK(t_delayed == Approx(m * 3.0 + (p - 1) * 1.0));
  CHECK(t_eager > t_delayed);
  CHECK(t_eager <= (m + p - 1) * 3.0 + 1e-9);
}

TEST_CASE("list scheduler: any stage-to-device map gives a complete order that runs", "[tuner][pipeline]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    const int devices = std::uniform_int_distribution<int>(1, 5)(rng);
    const int stages = std::uniform_int_distribution<int>(devices, 3 * devices)(rng);
    const int m = std::uniform_int_distribution<int>(1, 9)(rng);
    const std::vector<int> placement = random_map(stages, devices, rng);
    StageCosts costs = uniform_stages(stages, 1.0, 1.5, 0.7, 0.2, 10, 3);
    for (int s = 0; s < stages; ++s) costs.f[s] *= 1 + 0.5 * (s % 3);
    ListScheduleRules rules;
    rules.in_flight_limit.assign(devices, std::uniform_int_distribution<int>(1, 2 * stages)(rng));
    rules.split_backward = trial % 3 != 0;
    rules.f_before_b = trial % 2 == 0;
    rules.delay_w = trial % 5 != 0;
    INFO("trial " << trial);
    auto scheme = pipeline_list_schedule(shape(placement, devices, m), costs, rules);
    REQUIRE(scheme);
    evaluate(scheme.value(), costs);  // checked, complete, no deadlock
  }
}

TEST_CASE("list scheduler: a device waits only for the earliest work it may run (checked on the timeline)", "[tuner][pipeline]") {
  // Every task that could be a device's next one (the next microbatch of its kind and stage, its
  // inputs' arrival known from the timeline; a device's entry F only under its in-flight limit)
  // bounds when the device's actual next task starts: at the device's free time, or when that
  // task's inputs arrive, whichever is later. Links without contention and no memory limit: the
  // scheduler's own model.
  std::mt19937 rng(19);
  for (int trial = 0; trial < 80; ++trial) {
    const RandomCase c = random_case(rng, trial, 2, 8);
    const int devices = c.devices, stages = c.stages, m = c.microbatches;
    const std::vector<int>& placement = c.placement;
    const StageCosts& costs = c.costs;
    const ListScheduleRules& rules = c.rules;
    INFO("trial " << trial);
    const PipelineScheme scheme = pipeline_list_schedule(shape(placement, devices, m), costs, rules).value();
    REQUIRE(scheme.check());
    auto evaluator = PipelineEvaluator::compile(scheme);
    REQUIRE(evaluator);
    evaluator.value().set_record_starts(true);
    const PipelineEvaluation timeline = evaluator.value().evaluate(scheme, costs, LinkModel::unlimited).value();
    REQUIRE(timeline.completed);
    std::map<std::tuple<PipeOp, int, int>, double> end;  // (op, microbatch, stage) -> end; BW ends B
    for (int d = 0; d < devices; ++d)
      for (std::size_t j = 0; j < scheme.schedule[d].size(); ++j) {
        const PipeTask& t = scheme.schedule[d][j];
        const double e = timeline.start[d][j] + task_cost(t.op, t.stage, costs).time;
        end[{t.op == PipeOp::BW ? PipeOp::B : t.op, t.microbatch, t.stage}] = e;
      }
    auto hop = [&](int from, int to) { return placement[from] == placement[to] ? 0.0 : costs.comm[std::min(from, to)]; };
    auto ready = [&](const PipeTask& t) {
      switch (t.op) {
        case PipeOp::F: return t.stage == 0 ? 0.0 : end.at({PipeOp::F, t.microbatch, t.stage - 1}) + hop(t.stage - 1, t.stage);
        case PipeOp::W: return end.at({PipeOp::B, t.microbatch, t.stage});
        default:
          return t.stage == stages - 1 ? end.at({PipeOp::F, t.microbatch, t.stage})
                                       : end.at({PipeOp::B, t.microbatch, t.stage + 1}) + hop(t.stage + 1, t.stage);
      }
    };
    for (int d = 0; d < devices; ++d) {
      const auto& order = scheme.schedule[d];
      const int entry = static_cast<int>(std::find(placement.begin(), placement.end(), d) - placement.begin());
      std::map<std::pair<PipeOp, int>, int> started;  // (op, stage) -> tasks of it before position j
      double free = 0;
      int in_flight = 0;  // activations on the device between their F and B (no memory limit here)
      for (std::size_t j = 0; j < order.size(); ++j) {
        for (std::size_t q = j; q < order.size(); ++q) {
          const PipeTask& t = order[q];
          if (t.op == PipeOp::F && t.stage == entry && in_flight >= rules.in_flight_limit[d]) continue;  // held back
          if (started[{t.op, t.stage}] != t.microbatch) continue;  // not its stage's next of that kind
          INFO("device " << d << ": " << task_name(order[j]) << " at " << timeline.start[d][j] << " while "
                         << task_name(t) << " could start at " << std::max(free, ready(t)));
          CHECK(timeline.start[d][j] <= std::max(free, ready(t)) + 1e-9);
        }
        ++started[{order[j].op, order[j].stage}];
        in_flight += order[j].op == PipeOp::F ? 1 : order[j].op == PipeOp::W ? 0 : -1;
        free = timeline.start[d][j] + task_cost(order[j].op, order[j].stage, costs).time;
      }
    }
  }
}

TEST_CASE("list scheduler: the memory rule keeps every device within its limit", "[tuner][pipeline]") {
  const int p = 4, m = 16;
  StageCosts costs = uniform_stages(p, 1.0, 1.0, 1.0, 0, 10, 4);
  for (int d = 0; d < p; ++d) {
    costs.static_memory[d] = 5;
    costs.max_mem.push_back(5 + 25);  // room for two microbatches' activations and one B's gradients
  }
  ListScheduleRules rules;
  rules.in_flight_limit.assign(p, m);  // only memory holds F back
  const PipelineEvaluation r = evaluate(pipeline_list_schedule(contiguous(p, m), costs, rules).value(), costs);
  CHECK_FALSE(r.out_of_memory);
  rules.respect_memory = false;
  const PipelineEvaluation unbounded = evaluate(pipeline_list_schedule(contiguous(p, m), costs, rules).value(), costs);
  CHECK(unbounded.out_of_memory);
}

TEST_CASE("list scheduler: the memory rule holds on any stage-to-device map and rules", "[tuner][pipeline]") {
  // A device's limit leaves room for its stages' static memory and one to three microbatches'
  // activations (all its stages' F): the scheduler's orders, simulated, stay within it whatever
  // the map, depths and rules; without the rule some exceed it (else the limits test nothing).
  std::mt19937 rng(23);
  int over_without_rule = 0, packed_faster = 0;
  for (int trial = 0; trial < 80; ++trial) {
    RandomCase c = random_case(rng, trial, 4, 12);
    const int devices = c.devices, stages = c.stages, m = c.microbatches;
    const std::vector<int>& placement = c.placement;
    StageCosts& costs = c.costs;
    std::uniform_real_distribution<double> scale(0.3, 2.0);
    std::vector<double> held(devices, 0.0), one_microbatch(devices, 0.0);
    for (int s = 0; s < stages; ++s) {
      costs.mem_f[s] *= scale(rng);
      costs.mem_b[s] = -0.7 * costs.mem_f[s];
      costs.mem_w[s] = -0.3 * costs.mem_f[s];
      costs.static_memory[s] = 4 * scale(rng);
      held[placement[s]] += costs.static_memory[s];
      one_microbatch[placement[s]] += costs.mem_f[s];
    }
    for (int d = 0; d < devices; ++d)
      costs.max_mem.push_back(held[d] + one_microbatch[d] * std::uniform_real_distribution<double>(1.0, 3.0)(rng));
    ListScheduleRules& rules = c.rules;
    INFO("trial " << trial << ": " << devices << " devices, " << stages << " stages, " << m << " microbatches");
    const PipelineEvaluation within = evaluate(pipeline_list_schedule(shape(placement, devices, m), costs, rules).value(), costs);
    CHECK_FALSE(within.out_of_memory);
    for (int d = 0; d < devices; ++d) CHECK(within.peak_memory[d] <= costs.max_mem[d] + 1e-9);
    // The packing rule: always a complete order (evaluate checks it) and faster within the limit
    // on some maps (over it where every device waited: the three-stages test below).
    rules.reserve = MemoryReserve::newcomer;
    const PipelineEvaluation packed = evaluate(pipeline_list_schedule(shape(placement, devices, m), costs, rules).value(), costs);
    packed_faster += !packed.out_of_memory && packed.iteration_time < within.iteration_time * (1 - 1e-9);
    rules.reserve = MemoryReserve::all;
    rules.respect_memory = false;
    over_without_rule += evaluate(pipeline_list_schedule(shape(placement, devices, m), costs, rules).value(), costs).out_of_memory;
  }
  CHECK(over_without_rule >= 20);
  CHECK(packed_faster >= 5);
}

// Stages 0, 2 and 4 on device 0, an activation of 1 each, room for 4, by each memory reserve.
TEST_CASE("list scheduler: three stages on a device whose memory binds, by each reserve", "[tuner][pipeline]") {
  const int m = 3;
  StageCosts costs = uniform_stages(5, 1, 1, 1, 0, 1, 0);
  costs.max_mem = {4, 0};
  ListScheduleRules rules;
  rules.in_flight_limit = {m, m};
  const PipelineScheme shape_ = shape({0, 1, 0, 1, 0}, 2, m);
  auto run = [&](MemoryReserve reserve) {
    rules.reserve = reserve;
    auto scheme = pipeline_list_schedule(shape_, costs, rules);
    REQUIRE(scheme);  // every task, even when the rule leaves the device over its limit
    const PipelineEvaluation evaluation = evaluate(scheme.value(), costs);
    CHECK(evaluation.completed);
    return evaluation;
  };
  SECTION("when every device waits for memory, the earliest waiting task runs and the scheme is over its limit") {
    // Reserving for the new microbatch only, microbatch 1 enters (2 held + its 2 later <= 4) and
    // takes the last room with its stage 2 F before microbatch 0's stage 4 F is ready: that F
    // waits for room that only its own B could free, and nothing else can run.
    const PipelineEvaluation over = run(MemoryReserve::newcomer);
    CHECK(over.out_of_memory);
    CHECK(over.peak_memory[0] == Approx(5));
  }
  SECTION("reserving for all, microbatch 1 waits and it fits") {
    CHECK_FALSE(run(MemoryReserve::all).out_of_memory);
  }
  SECTION("reserving for the held microbatches, the newest one's later F keep clear of their room") {
    // Microbatch 1 enters beside microbatch 0's two later activations, reserved (1 held + 2 + its
    // own 1 <= 4), and its stage 2 F, which would fit on what is free when it is ready, waits
    // instead for what microbatch 0's stage 4 F was promised.
    const PipelineEvaluation fits = run(MemoryReserve::held);
    CHECK_FALSE(fits.out_of_memory);
    CHECK(fits.peak_memory[0] <= 4 + 1e-9);
  }
}

TEST_CASE("list scheduler: bad rules are errors", "[tuner][pipeline]") {
  const StageCosts costs = uniform_stages(2, 1, 1, 1);
  ListScheduleRules rules;
  rules.in_flight_limit = {1};
  CHECK_FALSE(pipeline_list_schedule(contiguous(2, 2), costs, rules));
  rules.in_flight_limit = {1, 0};
  CHECK_FALSE(pipeline_list_schedule(contiguous(2, 2), costs, rules));
  rules.in_flight_limit = {2, 1};
  CHECK_FALSE(pipeline_list_schedule(contiguous(3, 2), costs, rules));  // 3 stages, costs for 2
}
