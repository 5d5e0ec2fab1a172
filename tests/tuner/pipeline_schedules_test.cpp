#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/blocking_deadlock.hpp"
#include "sim/pipeline_evaluator.hpp"
#include "sim/pipeline_simulation.hpp"
#include "tuner/pipeline/schedules.hpp"
#include "pipeline_fixtures.hpp"

using namespace gantry;

namespace {

using testing::uniform_stages;

PipelineResult run(const PipelineScheme& scheme, const StageCosts& costs) {
  auto r = simulate_pipeline(scheme, costs);
  REQUIRE(r.ok());
  REQUIRE(r.value().completed);
  return r.value();
}

}  // namespace

TEST_CASE("1F1B: bubble (p-1)/(m+p-1) and stage i holds min(p-i, m) microbatches", "[sim][pipeline]") {
  for (auto [p, m] : {std::pair{4, 8}, std::pair{4, 2}, std::pair{8, 32}, std::pair{2, 1}}) {
    INFO("p=" << p << " m=" << m);
    const StageCosts costs = uniform_stages(p, 1.0, 1.0, 1.0);
    PipelineResult r = run(make_1f1b(p, m).value(), costs);
    CHECK(r.iteration_time == Approx((m + p - 1) * 3.0));
    CHECK(r.bubble_ratio == Approx(double(p - 1) / (m + p - 1)));
    for (int i = 0; i < p; ++i) CHECK(r.peak_memory[i] == Approx(10.0 * std::min(p - i, m)));
  }
}

TEST_CASE("GPipe: the same bubble with all m microbatches in flight", "[sim][pipeline]") {
  const int p = 4, m = 6;
  PipelineResult r = run(make_gpipe(p, m).value(), uniform_stages(p, 1.0, 1.5, 0.5));
  CHECK(r.bubble_ratio == Approx(double(p - 1) / (m + p - 1)));
  for (int i = 0; i < p; ++i) CHECK(r.peak_memory[i] == Approx(10.0 * m));
}

TEST_CASE("interleaved 1F1B: bubble / ideal = (p-1) / (v m)", "[sim][pipeline]") {
  for (auto [p, v, m] : {std::tuple{4, 2, 8}, std::tuple{4, 4, 8}, std::tuple{2, 3, 4}}) {
    INFO("p=" << p << " v=" << v << " m=" << m);
    // The model's per-device F and BW split evenly over v chunks.
    const StageCosts costs = uniform_stages(p * v, 1.0 / v, 2.0 / v, 0.0);
    PipelineResult r = run(make_interleaved(p, v, m).value(), costs);
    const double ideal = m * 3.0;
    CHECK((r.iteration_time - ideal) / ideal == Approx(double(p - 1) / (v * m)));
  }
  CHECK_FALSE(make_interleaved(4, 2, 6).ok());  // m must be a multiple of p
}

TEST_CASE("ZB-H1: m(F+B+W) + (p-1)(F+B-W) under 1F1B's memory", "[sim][pipeline]") {
  // held = 0: B frees the activations, so 1F1B's memory bound is the F-to-B in-flight limit p - i.
  for (auto [p, m, f, b, w] : {std::tuple{4, 8, 1.0, 1.0, 1.0}, std::tuple{4, 12, 1.0, 1.2, 0.8},
                               std::tuple{8, 32, 2.0, 2.0, 1.5}, std::tuple{8, 16, 1.0, 1.0, 1.0},
                               std::tuple{2, 5, 1.0, 2.0, 1.0}}) {
    INFO("p=" << p << " m=" << m << " F=" << f << " B=" << b << " W=" << w);
    const StageCosts costs = uniform_stages(p, f, b, w, 0, 10, 0);
    PipelineResult zb = run(make_zb_h1(p, m, costs).value(), costs);
    const double closed_form = m * (f + b + w) + (p - 1) * (f + b - w);
    if (f == b && b == w) {
      CHECK(zb.iteration_time == Approx(closed_form));
    } else {
      // The automatic schedule may beat the hand-made ZB-H1, never stage 0's bound: its first B
      // waits for p F and p-1 B on the critical path, of which it can overlap only its p F.
      CHECK(zb.iteration_time <= closed_form + 1e-9);
      CHECK(zb.iteration_time >= m * (f + b + w) + (p - 1) * b - 1e-9);
    }
    PipelineResult one = run(make_1f1b(p, m).value(), costs);
    CHECK(zb.iteration_time < one.iteration_time);
    for (int i = 0; i < p; ++i) CHECK(zb.peak_memory[i] <= one.peak_memory[i] + 1e-9);
  }
}

TEST_CASE("transfers: exposed time and overlap", "[sim][pipeline]") {
  const int p = 4, m = 8;
  PipelineResult r = run(make_1f1b(p, m).value(), uniform_stages(p, 1.0, 1.0, 1.0, 0.25));
  CHECK(r.transfer_time == Approx(2 * m * (p - 1) * 0.25));
  CHECK(r.overlap_ratio > 0);
  CHECK(r.overlap_ratio < 1);
  CHECK(r.iteration_time > (m + p - 1) * 3.0);
}

TEST_CASE("transfers: a two-stage 1F1B worked by hand", "[sim][pipeline]") {
  // p = 2, m = 2, F = 1, fused BW = 2, every hop 0.25. Device 0 runs F0 F1 BW0 BW1, device 1
  // F0 BW0 F1 BW1.
  //   dev 0: F0 [0,1], act0 -> dev 1 [1,1.25]; F1 [1,2], act1 [2,2.25].
  //   dev 1: F0 [1.25,2.25], BW0 [2.25,4.25], grad0 -> dev 0 [4.25,4.5]; F1 [4.25,5.25],
  //          BW1 [5.25,7.25], grad1 -> dev 0 [7.25,7.5].
  //   dev 0: BW0 [4.5,6.5], BW1 [7.5,9.5].
  // Iteration 9.5 = (m + p - 1) 3 + 2 (p - 1) 0.25. Transfers 4 x 0.25 = 1; exposed (the receiver
  // idle): act0 0.25, act1 0 (dev 1 runs F0), grad0 0.25, grad1 0.25 (dev 0 idle after 6.5):
  // overlap 1 - 0.75 / 1 = 0.25. Busy 2 x 2 x 3 = 12 of 2 x 9.5: bubble 7/19.
  PipelineResult r = run(make_1f1b(2, 2).value(), uniform_stages(2, 1.0, 1.0, 1.0, 0.25));
  CHECK(r.iteration_time == Approx(9.5));
  CHECK(r.transfer_time == Approx(1.0));
  CHECK(r.exposed_transfer_time == Approx(0.75));
  CHECK(r.overlap_ratio == Approx(0.25));
  CHECK(r.bubble_ratio == Approx(7.0 / 19));
}

TEST_CASE("the deadlock checker finds a planted cycle", "[sim][pipeline]") {
  PipelineScheme scheme = make_1f1b(2, 2).value();
  // Device 0 insists on the backward of microbatch 0 before the forward of microbatch 1, while
  // device 1 (the last stage) wants forward 1 before backward 0.
  scheme.schedule[0] = {{PipeOp::F, 0, 0}, {PipeOp::BW, 0, 0}, {PipeOp::F, 1, 0}, {PipeOp::BW, 1, 0}};
  scheme.schedule[1] = {{PipeOp::F, 0, 1}, {PipeOp::F, 1, 1}, {PipeOp::BW, 0, 1}, {PipeOp::BW, 1, 1}};
  auto r = simulate_pipeline(scheme, uniform_stages(2, 1, 1, 1));
  REQUIRE(r.ok());
  CHECK_FALSE(r.value().completed);
  CHECK_THAT(r.value().error, Catch::Contains("cycle") && Catch::Contains("device 0") && Catch::Contains("device 1"));
}

TEST_CASE("scheme validation and zero-bubble GraphConfig input", "[sim][pipeline]") {
  PipelineScheme scheme = make_1f1b(2, 2).value();
  scheme.schedule[1].pop_back();
  CHECK_THAT(scheme.check().error().message, Catch::Contains("never scheduled") || Catch::Contains("needs either"));
  auto parsed = read_stage_costs_json(
      R"({"n_stages": 2, "n_micro": 4, "cost_f": [1, 1.5], "cost_b": [1, 1], "cost_w": [0.5, 0.5],
          "cost_comm": 0.1, "mem_f": 4, "mem_b": -3, "mem_w": -1, "max_mem": 100})",
      "zb.json");
  REQUIRE(parsed.ok());
  CHECK(parsed.value().second == 4);
  CHECK(parsed.value().first.f[1] == 1.5);
  CHECK(parsed.value().first.comm[0] == 0.1);
  auto bad = read_stage_costs_json(R"({"n_stages": 2, "n_micro": 4, "cost_f": [1], "cost_b": 1, "cost_w": 1})", "bad.json");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("bad.json") && Catch::Contains("cost_f"));
  auto round = scheme_from_json(scheme_to_json(make_1f1b(3, 5).value()), "scheme.json");
  REQUIRE(round.ok());
  CHECK(round.value().schedule == make_1f1b(3, 5).value().schedule);
  // A stage file's stages are its devices: no more than kMaxDevices (1024).
  auto many = read_stage_costs_json(R"({"n_stages": 1100, "n_micro": 4, "cost_f": 1, "cost_b": 1, "cost_w": 1})", "many.json");
  REQUIRE_FALSE(many.ok());
  CHECK_THAT(many.error().message, Catch::Contains("many.json: n_stages 1100") && Catch::Contains("1024"));
  // A layer index past int is refused, not truncated (2^32 read as an int is 0).
  nlohmann::json text = nlohmann::json::parse(scheme_to_json(make_1f1b(2, 2).value()));
  text["partition"] = {{4294967296LL, 35}, {35, 36}};
  auto wrapped = scheme_from_json(text.dump(), "wrapped.json");
  REQUIRE_FALSE(wrapped.ok());
  CHECK_THAT(wrapped.error().message, Catch::Contains("wrapped.json: partition[0]"));
}

TEST_CASE("ZB under a tight memory limit runs W early and stays within it", "[sim][pipeline]") {
  const int p = 4, m = 8;
  StageCosts costs = uniform_stages(p, 1.0, 1.0, 1.0, 0, 10, 6);  // W keeps 6 of every 10 until it runs
  PipelineResult loose = run(make_zb_h1(p, m, costs).value(), costs);
  costs.max_mem.assign(p, 24.0);  // room for two microbatches' activations
  PipelineResult tight = run(make_zb_h1(p, m, costs).value(), costs);
  for (int i = 0; i < p; ++i) CHECK(tight.peak_memory[i] <= 24.0 + 1e-9);
  CHECK_FALSE(tight.out_of_memory);
  CHECK(tight.iteration_time >= loose.iteration_time);
}

TEST_CASE("blocking send/recv: 1F1B's naive order deadlocks, GPipe's does not", "[sim][pipeline]") {
  // Device 0 sends activation 1 while device 1 sends gradient 0: both block, each waiting for the
  // other to post the matching receive.
  BlockingCheck one = check_blocking_order(make_1f1b(2, 4).value());
  CHECK_FALSE(one.progresses);
  CHECK_THAT(one.cycle, Catch::Contains("device 0 (send activation 1 to 1) -> device 1 (send gradient 0 to 0) -> device 0"));
  CHECK(check_blocking_order(make_gpipe(4, 8).value()).progresses);
  // With asynchronous transfers the same 1F1B order runs.
  CHECK(run(make_1f1b(2, 4).value(), uniform_stages(2, 1, 1, 1)).completed);
  // Batched (the send after F and the receive before B posted together, as executors do), it progresses.
  CHECK(check_blocking_order(make_1f1b(2, 4).value(), /*batched=*/true).progresses);
  CHECK(check_blocking_order(make_1f1b(8, 32).value(), true).progresses);
  CHECK(check_blocking_order(make_gpipe(4, 8).value(), true).progresses);
}

TEST_CASE("blocking send/recv, batched: two devices that each send first still deadlock", "[sim][pipeline]") {
  // Stage 0 and stage 2 on device 0, stage 1 on device 1, one microbatch, orders written by hand
  // so that each device's first transfer is a send the other has not posted a receive for: device
  // 0 runs F0 of stage 0 and sends it, device 1 has B of stage 1 first, which waits for a gradient
  // only device 0 can send after F of stage 2, which needs stage 1's F: a cycle in any model.
  PipelineScheme s;
  s.num_microbatches = 1;
  s.placement = {0, 1, 0};
  s.schedule = {{{PipeOp::F, 0, 0}, {PipeOp::F, 0, 2}, {PipeOp::B, 0, 2}, {PipeOp::W, 0, 2}, {PipeOp::B, 0, 0}, {PipeOp::W, 0, 0}},
                {{PipeOp::B, 0, 1}, {PipeOp::F, 0, 1}, {PipeOp::W, 0, 1}}};
  const BlockingCheck batched = check_blocking_order(s, true);
  CHECK_FALSE(batched.progresses);
  CHECK_THAT(batched.cycle, Catch::Contains("device 0 (send activation 0 to 1) -> device 1 (recv gradient 0 from 0) -> device 0"));
}

TEST_CASE("ZB-V: two chunks per device in a V, fewer bubbles than ZB-H1 and interleaved", "[sim][pipeline]") {
  for (auto [p, m] : {std::pair{4, 8}, std::pair{4, 16}, std::pair{8, 32}}) {
    INFO("p=" << p << " m=" << m);
    const StageCosts chunks = uniform_stages(2 * p, 0.5, 0.5, 0.5, 0, 5, 0);  // half a stage per chunk
    PipelineScheme v = make_zb_v(p, m, chunks).value();
    CHECK(v.placement[0] == 0);
    CHECK(v.placement[2 * p - 1] == 0);  // the V comes back to device 0
    PipelineResult zbv = run(v, chunks);
    const StageCosts whole = uniform_stages(p, 1.0, 1.0, 1.0, 0, 10, 0);
    PipelineResult zbh1 = run(make_zb_h1(p, m, whole).value(), whole);
    CHECK(zbv.iteration_time <= zbh1.iteration_time + 1e-9);
    CHECK(zbv.bubble_ratio < zbh1.bubble_ratio + 1e-9);
    for (int d = 0; d < p; ++d) CHECK(zbv.peak_memory[d] <= 10.0 * p + 1e-9);  // 1F1B's first-stage memory
  }
}

TEST_CASE("MFU counts each device's own peak", "[sim][pipeline]") {
  StageCosts costs = uniform_stages(2, 1.0, 1.0, 1.0);
  costs.flops = {10, 30};
  PipelineRunInfo info;
  info.device_peak_flops = {1, 2};  // a slow and a fast device
  auto r = simulate_pipeline(make_1f1b(2, 2).value(), costs, info);
  REQUIRE(r);
  const double t = (2 + 2 - 1) * 3.0;  // 1F1B: (m + p - 1)(F + B + W)
  REQUIRE(r.value().iteration_time == Approx(t));
  CHECK(r.value().mfu == Approx(40.0 * 2 / (t * 3)));
  REQUIRE(r.value().device_mfu.size() == 2);
  CHECK(r.value().device_mfu[0] == Approx(10.0 * 2 / (t * 1)));
  CHECK(r.value().device_mfu[1] == Approx(30.0 * 2 / (t * 2)));
}

namespace {

// Device -> the end time of each of its tasks, from the evaluator's start times.
std::vector<std::vector<double>> task_ends(const PipelineScheme& scheme, const StageCosts& costs) {
  auto evaluator = PipelineEvaluator::compile(scheme);
  REQUIRE(evaluator);
  evaluator.value().set_record_starts(true);
  PipelineEvaluation out;
  REQUIRE(evaluator.value().evaluate(scheme, costs, LinkModel::contention, out));
  REQUIRE(out.completed);
  return task_end_times(scheme, costs, out.start);
}

}  // namespace

TEST_CASE("blocking send/recv in the timeline's order: every schedule progresses, zero-bubble ones included",
          "[sim][pipeline]") {
  // One call at a time, as "receive, compute, send" deadlocks 1F1B, interleaved, ZB-H1 and ZB-V;
  // posted in the order of the producers' end times, none can (the claim of
  // check_timeline_program, checked here on each baseline with and without transfer time).
  for (double comm : {0.0, 0.3}) {
    const int p = 4, m = 8;
    const StageCosts costs = uniform_stages(p, 1, 1, 1, comm);
    const StageCosts chunks = uniform_stages(2 * p, 0.5, 0.5, 0.5, comm, 5, 0);
    const std::vector<std::pair<PipelineScheme, const StageCosts*>> schemes = {
        {make_gpipe(p, m).value(), &costs},        {make_1f1b(p, m).value(), &costs},
        {make_interleaved(p, 2, m).value(), &chunks}, {make_zb_h1(p, m, costs).value(), &costs},
        {make_zb_v(p, m, chunks).value(), &chunks}};
    for (const auto& [scheme, c] : schemes) {
      const BlockingCheck timed = check_timeline_program(scheme, task_ends(scheme, *c));
      INFO("stages " << scheme.num_stages() << ", comm " << comm << ": " << timed.cycle);
      CHECK(timed.progresses);
    }
    CHECK_FALSE(check_blocking_order(make_zb_h1(p, m, costs).value()).progresses);
  }
  // Times that contradict the order (a receive due after its consumer started) are named.
  const PipelineScheme one = make_1f1b(2, 2).value();
  std::vector<std::vector<double>> wrong = task_ends(one, uniform_stages(2, 1, 1, 1));
  wrong[0][0] = 100;  // device 0's first F ends long after device 1's F needed it
  const BlockingCheck bad = check_timeline_program(one, wrong);
  CHECK_FALSE(bad.progresses);
  CHECK_THAT(bad.cycle, Catch::Contains("device 1: recv activation 0 is due after"));
}
