// The search loop's evaluator against the event simulator (simulate_pipeline, pinned elsewhere by
// closed forms and hand-worked cases) on random schemes: random stage-to-device maps (several
// stages per device, in any order), fused and split backward passes, random per-device orders,
// random costs and memory, both link models; orders perturbed until some deadlock.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <tuple>

#include "sim/blocking_deadlock.hpp"
#include "sim/pipeline_evaluator.hpp"
#include "sim/pipeline_simulation.hpp"

using namespace gantry;

namespace {

struct RandomCase {
  PipelineScheme scheme;
  StageCosts costs;
};

// Per-device orders read off one random topological order of the tasks: never a deadlock.
RandomCase random_case(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto real = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  const int devices = pick(1, 5), stages = pick(devices, 2 * devices + 1), micro = pick(1, 7);
  RandomCase c;
  PipelineScheme& s = c.scheme;
  s.num_microbatches = micro;
  s.schedule.resize(devices);
  for (int k = 0; k < stages; ++k) s.placement.push_back(k < devices ? k : pick(0, devices - 1));
  std::shuffle(s.placement.begin(), s.placement.end(), rng);
  std::vector<std::vector<bool>> fused(micro, std::vector<bool>(stages));
  for (auto& row : fused)
    for (int k = 0; k < stages; ++k) row[k] = pick(0, 2) == 0;
  // Tasks whose inputs are done, chosen at random.
  std::vector<PipeTask> ready;
  for (int m = 0; m < micro; ++m) ready.push_back({PipeOp::F, m, 0});
  auto backward = [&](int m, int k) { return PipeTask{fused[m][k] ? PipeOp::BW : PipeOp::B, m, k}; };
  while (!ready.empty()) {
    const int i = pick(0, static_cast<int>(ready.size()) - 1);
    const PipeTask t = ready[i];
    ready.erase(ready.begin() + i);
    s.schedule[s.placement[t.stage]].push_back(t);
    if (t.op == PipeOp::F) ready.push_back(t.stage + 1 < stages ? PipeTask{PipeOp::F, t.microbatch, t.stage + 1}
                                                                : backward(t.microbatch, t.stage));
    if ((t.op == PipeOp::B || t.op == PipeOp::BW) && t.stage > 0) ready.push_back(backward(t.microbatch, t.stage - 1));
    if (t.op == PipeOp::B) ready.push_back({PipeOp::W, t.microbatch, t.stage});
  }
  StageCosts& k = c.costs;
  for (int i = 0; i < stages; ++i) {
    // Some zero times and transfers: ties are where two engines part first.
    k.f.push_back(pick(0, 5) == 0 ? 0.0 : real(0.1, 2));
    k.b.push_back(real(0.1, 3));
    k.w.push_back(pick(0, 5) == 0 ? 0.0 : real(0.1, 1.5));
    k.comm.push_back(pick(0, 3) == 0 ? 0.0 : real(0.01, 1.5));
    k.mem_f.push_back(real(1, 10));
    k.mem_b.push_back(pick(0, 1) ? real(0, 3) : -real(0, k.mem_f.back()));
    k.mem_w.push_back(-(k.mem_f.back() + k.mem_b.back()));
    k.static_memory.push_back(real(0, 50));
    k.flops.push_back(0);
  }
  if (pick(0, 2) == 0)  // recomputing stages hold memory only while their B runs
    for (int i = 0; i < stages; ++i) k.transient_b.push_back(pick(0, 1) ? 0.0 : real(0, 8));
  for (int d = 0; d < devices; ++d) k.max_mem.push_back(pick(0, 2) == 0 ? 0.0 : real(40, 120));
  return c;
}

void require_same(const PipelineEvaluation& fast, const PipelineResult& full) {
  REQUIRE(fast.completed == full.completed);
  if (!full.completed) return;
  CHECK(fast.iteration_time == Approx(full.iteration_time).epsilon(1e-12).margin(1e-12));
  CHECK(fast.bubble_ratio == Approx(full.bubble_ratio).epsilon(1e-9).margin(1e-12));
  // The event simulator runs offloading schemes' copy engines as devices after the scheme's.
  REQUIRE(fast.busy.size() <= full.sim.busy.size());
  for (std::size_t d = 0; d < fast.busy.size(); ++d) CHECK(fast.busy[d] == Approx(full.sim.busy[d]).epsilon(1e-12));
  REQUIRE(fast.peak_memory.size() == full.peak_memory.size());
  for (std::size_t d = 0; d < fast.peak_memory.size(); ++d)
    CHECK(fast.peak_memory[d] == Approx(full.peak_memory[d]).epsilon(1e-12).margin(1e-12));
  CHECK(fast.out_of_memory == full.out_of_memory);
}

// One stage on one device with F = B = W = 1 and the given memory deltas.
StageCosts one_stage(double mem_f, double mem_b, double mem_w) {
  StageCosts c;
  c.f = {1};
  c.b = {1};
  c.w = {1};
  c.comm = {0};
  c.mem_f = {mem_f};
  c.mem_b = {mem_b};
  c.mem_w = {mem_w};
  c.static_memory = {0};
  c.flops = {0};
  return c;
}

// `micro` microbatches of one stage, every F first, then B and W of each in turn.
PipelineScheme all_forward_first(int micro) {
  PipelineScheme scheme;
  scheme.num_microbatches = micro;
  scheme.placement = {0};
  scheme.schedule.resize(1);
  for (int m = 0; m < micro; ++m) scheme.schedule[0].push_back({PipeOp::F, m, 0});
  for (int m = 0; m < micro; ++m) scheme.schedule[0].insert(scheme.schedule[0].end(), {{PipeOp::B, m, 0}, {PipeOp::W, m, 0}});
  return scheme;
}

}  // namespace

TEST_CASE("pipeline evaluator: the event simulator's times and memory on random schemes", "[sim][pipeline]") {
  std::mt19937 rng(20261201);
  int deadlocks = 0, runs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    RandomCase c = random_case(rng);
    auto evaluator = PipelineEvaluator::compile(c.scheme);
    REQUIRE(evaluator);
    for (int perturbation = 0; perturbation < 4; ++perturbation) {
      for (LinkModel links : {LinkModel::contention, LinkModel::unlimited}) {
        PipelineRunInfo info;
        info.links = links;
        auto full = simulate_pipeline(c.scheme, c.costs, info);
        REQUIRE(full);
        auto fast = evaluator.value().evaluate(c.scheme, c.costs, links);
        REQUIRE(fast);
        require_same(fast.value(), full.value());
        deadlocks += !full.value().completed;
        ++runs;
      }
      // Swap two tasks of one device: the structure stays, the order may now deadlock.
      auto& list = c.scheme.schedule[std::uniform_int_distribution<int>(0, c.scheme.num_devices() - 1)(rng)];
      if (list.size() >= 2) {
        const auto i = std::uniform_int_distribution<std::size_t>(0, list.size() - 1)(rng);
        const auto j = std::uniform_int_distribution<std::size_t>(0, list.size() - 1)(rng);
        std::swap(list[i], list[j]);
      }
    }
  }
  // Both outcomes were exercised.
  CHECK(deadlocks > 50);
  CHECK(runs - deadlocks > 500);
}

TEST_CASE("pipeline evaluator: the event simulator's times and memory on random offloading schemes", "[sim][pipeline]") {
  // The two engines time the copies independently (copy engines as devices of the event
  // simulator, their own worklist in the evaluator); both then sweep the memory events.
  std::mt19937 rng(20261203);
  int slower = 0, lighter = 0;
  auto peak = [](const std::vector<double>& per_device) { return *std::max_element(per_device.begin(), per_device.end()); };
  for (int trial = 0; trial < 200; ++trial) {
    RandomCase c = random_case(rng);
    const int stages = c.costs.num_stages();
    for (int s = 0; s < stages; ++s) {
      c.costs.host_bandwidth.push_back(std::uniform_real_distribution<double>(1, 20)(rng));
      const int quarters = std::uniform_int_distribution<int>(0, 4)(rng);
      c.costs.offload.push_back(quarters / 4.0 * c.costs.mem_f[s]);
    }
    c.scheme.reload_ahead = std::uniform_int_distribution<int>(1, 4)(rng);
    REQUIRE(c.costs.check("random offload"));
    auto evaluator = PipelineEvaluator::compile(c.scheme);
    REQUIRE(evaluator);
    StageCosts none = c.costs;
    none.offload.clear();
    auto without = simulate_pipeline(c.scheme, none, {});
    REQUIRE(without);
    for (LinkModel links : {LinkModel::contention, LinkModel::unlimited}) {
      PipelineRunInfo info;
      info.links = links;
      auto full = simulate_pipeline(c.scheme, c.costs, info);
      REQUIRE(full);
      REQUIRE(full.value().completed);  // copies never deadlock an order that runs
      auto fast = evaluator.value().evaluate(c.scheme, c.costs, links);
      REQUIRE(fast);
      require_same(fast.value(), full.value());
      if (links == LinkModel::contention) {
        // Copies only add waits: never faster than without them.
        CHECK(full.value().iteration_time >= without.value().iteration_time - 1e-12);
        slower += full.value().iteration_time > without.value().iteration_time + 1e-9;
        lighter += peak(full.value().peak_memory) < peak(without.value().peak_memory) - 1e-9;
      }
    }
  }
  CHECK(slower > 20);   // the copies' waits were exercised
  CHECK(lighter > 20);  // and the memory they free
}

TEST_CASE("offloaded activations leave the device after F and come back before B, worked by hand", "[sim][pipeline]") {
  // One stage on one device, 3 microbatches: F0 F1 F2 B0 W0 B1 W1 B2 W2; F = B = W = 1; F
  // allocates 10, W frees it. Half of it (5) goes to host memory and back at 5 bytes/s: 1 each.
  // Without offload: time 9, peak 30 (three activations after F2).
  // reload_ahead 1 (each copy back issued at the end of the task just before its B):
  //   F0 [0,1] F1 [1,2] F2 [2,3]; out: F0 [1,2] F1 [2,3] F2 [3,4]; back B0 after F2 [3,4], B0
  //   [4,5] W0 [5,6]; back B1 after W0 [6,7], B1 [7,8] W1 [8,9]; back B2 [9,10], B2 [10,11] W2
  //   [11,12]: time 12. Memory: 10 at 0, 20 at 1, at 2 -5 then +10: 25, at 3 -5 +5: 25, then
  //   lower: peak 25.
  // reload_ahead 2 (issued one task earlier): back B0 after F1 and its copy out, [2,3]; B0 [3,4]
  //   W0 [4,5]; back B1 after B0 [4,5], B1 [5,6] W1 [6,7]; back B2 after B1 [6,7], B2 [7,8] W2
  //   [8,9]: time 9; at 2 -5, +5 (B0's copy back), +10 (F2): peak 30.
  StageCosts c = one_stage(10, 0, -10);
  c.host_bandwidth = {5};
  PipelineScheme scheme = all_forward_first(3);
  auto plain = simulate_pipeline(scheme, c, {});
  REQUIRE(plain);
  CHECK(plain.value().iteration_time == Approx(9));
  CHECK(plain.value().peak_memory[0] == Approx(30));
  REQUIRE(offload_stage(c, 0, 0.5));
  CHECK(c.offload == std::vector<double>{5});
  auto evaluator = PipelineEvaluator::compile(scheme);
  REQUIRE(evaluator);
  for (auto [ahead, time, peak] : {std::tuple{1, 12.0, 25.0}, std::tuple{2, 9.0, 30.0}}) {
    INFO("reload_ahead " << ahead);
    scheme.reload_ahead = ahead;
    auto full = simulate_pipeline(scheme, c, {});
    REQUIRE(full);
    CHECK(full.value().iteration_time == Approx(time));
    CHECK(full.value().peak_memory[0] == Approx(peak));
    // The device computes 9; its copy engines out and back each copy 3 x 1.
    CHECK(full.value().sim.busy == std::vector<double>{9, 3, 3});
    auto fast = evaluator.value().evaluate(scheme, c);
    REQUIRE(fast);
    CHECK(fast.value().iteration_time == Approx(time));
    CHECK(fast.value().peak_memory[0] == Approx(peak));
    CHECK(fast.value().busy == std::vector<double>{9});
  }
  // A fused BW waits for its copy back the same way.
  scheme.reload_ahead = 1;
  scheme.schedule = {{{PipeOp::F, 0, 0}, {PipeOp::F, 1, 0}, {PipeOp::F, 2, 0}, {PipeOp::BW, 0, 0}, {PipeOp::BW, 1, 0},
                      {PipeOp::BW, 2, 0}}};
  // back BW0 after F2 [3,4], BW0 [4,6]; back BW1 after BW0 [6,7], BW1 [7,9]; BW2 [10,12].
  auto fused = evaluator.value().evaluate(scheme, c);
  CHECK_FALSE(fused);  // another structure: the evaluator was compiled for split backward passes
  auto fused_full = simulate_pipeline(scheme, c, {});
  REQUIRE(fused_full);
  CHECK(fused_full.value().iteration_time == Approx(12));
  // Per-stage cost files do not give the host bandwidth offload needs.
  StageCosts file = c;
  file.host_bandwidth.clear();
  file.offload.clear();
  CHECK_FALSE(offload_stage(file, 0, 0.5));
  CHECK_FALSE(offload_stage(c, 0, 1.5));
}

TEST_CASE("pipeline evaluator: a two-stage 1F1B worked by hand", "[sim][pipeline]") {
  // Device 0: F0 F1 BW0 BW1, device 1: F0 BW0 F1 BW1; F = 1, BW = 2, transfer = 0.5.
  //   d0: F0 [0,1] F1 [1,2]; d1: F0 [1.5,2.5] BW0 [2.5,4.5] F1 (arrived 2.5) [4.5,5.5] BW1 [5.5,7.5]
  //   d0: BW0 needs d1's BW0 + 0.5 = 5 -> [5,7]; BW1 needs 7.5 + 0.5 = 8 -> [8,10]. Time 10.
  // Memory: F holds 4 until its BW frees it; d0 holds both microbatches at once: 8, plus static 1.
  PipelineScheme s;
  s.num_microbatches = 2;
  s.placement = {0, 1};
  s.schedule = {{{PipeOp::F, 0, 0}, {PipeOp::F, 1, 0}, {PipeOp::BW, 0, 0}, {PipeOp::BW, 1, 0}},
                {{PipeOp::F, 0, 1}, {PipeOp::BW, 0, 1}, {PipeOp::F, 1, 1}, {PipeOp::BW, 1, 1}}};
  StageCosts c;
  c.f = {1, 1};
  c.b = {1.5, 1.5};
  c.w = {0.5, 0.5};
  c.comm = {0.5, 0};
  c.mem_f = {4, 4};
  c.mem_b = {-1, -1};
  c.mem_w = {-3, -3};
  c.static_memory = {1, 1};
  c.flops = {0, 0};
  c.max_mem = {8.5, 100};
  auto e = PipelineEvaluator::compile(s);
  REQUIRE(e);
  auto r = e.value().evaluate(s, c);
  REQUIRE(r);
  CHECK(r.value().completed);
  CHECK(r.value().iteration_time == Approx(10));
  CHECK(r.value().busy == std::vector<double>{6, 6});
  CHECK(r.value().bubble_ratio == Approx(1 - 12.0 / 20));
  CHECK(r.value().peak_memory == std::vector<double>{9, 5});
  CHECK(r.value().out_of_memory);  // 9 > 8.5 on device 0
}

TEST_CASE("pipeline evaluator: another structure or a broken order is an error naming the task", "[sim][pipeline]") {
  PipelineScheme s;
  s.num_microbatches = 1;
  s.placement = {0, 1};
  s.schedule = {{{PipeOp::F, 0, 0}, {PipeOp::B, 0, 0}, {PipeOp::W, 0, 0}}, {{PipeOp::F, 0, 1}, {PipeOp::BW, 0, 1}}};
  auto e = PipelineEvaluator::compile(s);
  REQUIRE(e);
  StageCosts c;
  c.f = c.b = c.w = {1, 1};
  c.comm = {0, 0};
  c.mem_f = {1, 1};
  c.mem_b = {0, 0};
  c.mem_w = {-1, -1};
  c.static_memory = c.flops = {0, 0};
  CHECK(e.value().evaluate(s, c));

  PipelineScheme twice = s;
  twice.schedule[0][2] = {PipeOp::B, 0, 0};
  auto r = e.value().evaluate(twice, c);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("B(0,0)") && Catch::Contains("twice"));

  PipelineScheme fused = s;
  fused.schedule[0] = {{PipeOp::F, 0, 0}, {PipeOp::BW, 0, 0}};
  CHECK_FALSE(e.value().evaluate(fused, c));
  r = e.value().evaluate(fused, c);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("BW(0,0)") && Catch::Contains("split"));

  PipelineScheme moved = s;
  moved.placement = {0, 0};
  CHECK_FALSE(e.value().evaluate(moved, c));

  StageCosts three = c;  // valid costs, of another stage count
  for (std::vector<double>* list : {&three.f, &three.b, &three.w, &three.comm, &three.mem_f, &three.mem_b, &three.mem_w,
                                    &three.static_memory, &three.flops})
    list->push_back(list->back());
  r = e.value().evaluate(s, three);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("3 stages"));
}

TEST_CASE("a recomputing stage keeps its input from F to B and rebuilds its activations while B runs",
          "[sim][pipeline]") {
  // One stage on one device, 2 microbatches in the order F0 F1 B0 W0 B1 W1; F = B = W = 1;
  // activation 10 (the input 1 among it), of which B keeps 4 for W, B's gradients for W 2. By
  // hand: without recomputation memory goes 10, 20 | 16 (B0 frees 6, adds 2), 10 | 6, 0: peak
  // 20, time 6. Recomputing, F keeps the inputs: 1, 2 | during B0 microbatch 1's input 1, B0's
  // activations 10 (its input kept, 9 rebuilt) and gradients 2: 13; after it 1 + 6 = 7 | W0 frees
  // 6: 1 | B1 1 + 9 + 2 = 12, then 6 | 0: peak 13; B takes F + B = 2, so time 8.
  StageCosts c = one_stage(10, -(10.0 - 4) + 2, -(4.0 + 2));
  c.input_bytes = {1};
  c.w_grad_bytes = {2};
  PipelineScheme scheme = all_forward_first(2);
  auto plain = simulate_pipeline(scheme, c, {});
  REQUIRE(plain);
  CHECK(plain.value().peak_memory[0] == Approx(20));
  CHECK(plain.value().iteration_time == Approx(6));
  StageCosts r = c;
  REQUIRE(recompute_stage(r, 0));
  auto recomputed = simulate_pipeline(scheme, r, {});
  REQUIRE(recomputed);
  CHECK(recomputed.value().peak_memory[0] == Approx(13));
  CHECK(recomputed.value().iteration_time == Approx(8));
  CHECK(r.check("recomputed"));
  // A fused BW rebuilds the activations too: F0 F1 hold 2, BW0 peaks at 1 + 10 + 2 = 13.
  scheme.schedule = {{{PipeOp::F, 0, 0}, {PipeOp::F, 1, 0}, {PipeOp::BW, 0, 0}, {PipeOp::BW, 1, 0}}};
  auto fused = simulate_pipeline(scheme, r, {});
  REQUIRE(fused);
  CHECK(fused.value().peak_memory[0] == Approx(13));
  // Per-stage cost files do not give the sizes recomputation needs.
  StageCosts file = c;
  file.input_bytes.clear();
  CHECK_FALSE(recompute_stage(file, 0));
}

TEST_CASE("blocking send/recv in the timeline's order progresses on every random scheme that runs", "[sim][pipeline]") {
  // The claim of check_timeline_program, on random stage-to-device maps, fused and split
  // backward passes, random orders and costs, both link models: whenever the asynchronous run
  // completes, the program ordered by its transfers' times does too.
  std::mt19937 rng(7);
  int checked = 0, naive_deadlocks = 0;
  for (int trial = 0; trial < 300; ++trial) {
    RandomCase c = random_case(rng);
    auto evaluator = PipelineEvaluator::compile(c.scheme);
    REQUIRE(evaluator);
    evaluator.value().set_record_starts(true);
    for (LinkModel links : {LinkModel::contention, LinkModel::unlimited}) {
      PipelineEvaluation out;
      REQUIRE(evaluator.value().evaluate(c.scheme, c.costs, links, out));
      if (!out.completed) continue;
      const BlockingCheck timed = check_timeline_program(c.scheme, task_end_times(c.scheme, c.costs, out.start));
      INFO("trial " << trial << ": " << timed.cycle);
      CHECK(timed.progresses);
      naive_deadlocks += !check_blocking_order(c.scheme).progresses;
      ++checked;
    }
  }
  CHECK(checked > 400);
  CHECK(naive_deadlocks > 50);  // cases where the order alone, one call at a time, does deadlock
}
