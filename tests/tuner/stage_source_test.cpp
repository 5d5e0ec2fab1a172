// Schedules by name, per-stage costs spread over virtual stages, and cost validation, with
// expected values worked out by hand.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "sim/pipeline_simulation.hpp"
#include "tuner/pipeline/schedule_registry.hpp"
#include "tuner/pipeline/stage_source.hpp"

using namespace gantry;

namespace {

// One stage per device with the given F and B (W = 0, no memory) and hops `comm`.
StageCosts per_device(std::vector<double> f, std::vector<double> b, std::vector<double> comm) {
  StageCosts c;
  const std::size_t p = f.size();
  c.f = std::move(f);
  c.b = std::move(b);
  c.w.assign(p, 0.0);
  c.comm = std::move(comm);
  for (auto* list : {&c.mem_f, &c.mem_b, &c.mem_w, &c.static_memory, &c.flops}) list->assign(p, 0.0);
  return c;
}

double iteration_time(const PipelineScheme& scheme, const StageCosts& costs) {
  auto r = simulate_pipeline(scheme, costs);
  REQUIRE(r.ok());
  REQUIRE(r.value().completed);
  return r.value().iteration_time;
}

}  // namespace

TEST_CASE("interleaved from a stage file: the last-to-first hop is a real hop", "[tuner][pipeline]") {
  // p = 2, v = 2: chunk F = 1, BW = 1 (stage F = B = 2 split over 2 chunks), every hop 0.5. The
  // file's comm list ends in 0 (nothing follows its last stage); the hop from device 1 back to
  // device 0 between the chunks is the largest neighbour hop, 0.5, not that 0.
  const StageCosts file = per_device({2, 2}, {2, 2}, {0.5, 0.0});
  auto source = stage_file_source(file);
  auto run = build_pipeline("interleaved:2", *source, 2, "n_micro");
  REQUIRE(run.ok());
  CHECK(run.value().costs.comm == std::vector<double>{0.5, 0.5, 0.5, 0.0});
  CHECK(run.value().costs.f == std::vector<double>{1, 1, 1, 1});
  // Megatron's order, worked by hand (F(m,s), BW(m,s); s = chunk * 2 + device):
  //   device 0: F(0,0) 0-1, F(1,0) 1-2, F(0,2) 3-4, F(1,2) 4-5, BW(0,2) 7-8, BW(1,2) 9-10,
  //             BW(0,0) 10-11, BW(1,0) 12-13
  //   device 1: F(0,1) 1.5-2.5, F(1,1) 2.5-3.5, F(0,3) 4.5-5.5, BW(0,3) 5.5-6.5, F(1,3) 6.5-7.5,
  //             BW(1,3) 7.5-8.5, BW(0,1) 8.5-9.5, BW(1,1) 10.5-11.5
  // (with the wrap hop free it would end at 12).
  CHECK(iteration_time(run.value().scheme, run.value().costs) == Approx(13.0));
}

TEST_CASE("ZB-V from a stage file reverses the hops of the returning chunks", "[tuner][pipeline]") {
  // p = 3 with hops a = 0.1 (devices 0-1) and b = 0.3 (devices 1-2). The V puts stages 0..5 on
  // devices 0 1 2 2 1 0: hops a, b, free (same device), b, a.
  const StageCosts file = per_device({1, 2, 3}, {2, 4, 6}, {0.1, 0.3, 0.0});
  auto source = stage_file_source(file);
  auto run = build_pipeline("zbv", *source, 6, "n_micro");
  REQUIRE(run.ok());
  const StageCosts& c = run.value().costs;
  CHECK(run.value().scheme.placement == std::vector<int>{0, 1, 2, 2, 1, 0});
  CHECK(c.comm == std::vector<double>{0.1, 0.3, 0.0, 0.3, 0.1, 0.0});
  CHECK(c.f == std::vector<double>{0.5, 1, 1.5, 1.5, 1, 0.5});
  CHECK(c.b == std::vector<double>{1, 2, 3, 3, 2, 1});
  // The simulated scheme uses exactly these hand-written costs.
  StageCosts by_hand = per_device({0.5, 1, 1.5, 1.5, 1, 0.5}, {1, 2, 3, 3, 2, 1}, {0.1, 0.3, 0.0, 0.3, 0.1, 0.0});
  CHECK(iteration_time(run.value().scheme, c) == iteration_time(run.value().scheme, by_hand));
}

TEST_CASE("spread_over_devices: a device's work divided among its stages, hops by device pair", "[tuner][pipeline]") {
  StageCosts file = per_device({6, 3, 9}, {6, 3, 9}, {0.2, 0.4});  // a list of the p - 1 hops
  file.comm.push_back(0);
  file.mem_f = {12, 6, 3};
  file.static_memory = {30, 60, 90};
  // Device 0 runs three stages, device 1 none, device 2 one: hops 0 -> 0 free, 0 -> 2 not
  // neighbours (the largest neighbour hop, 0.4), 2 -> 0 the same.
  const StageCosts c = spread_over_devices(file, {0, 0, 2, 0});
  CHECK(c.f == std::vector<double>{2, 2, 9, 2});
  CHECK(c.mem_f == std::vector<double>{4, 4, 3, 4});
  CHECK(c.static_memory == std::vector<double>{10, 10, 90, 10});
  CHECK(c.comm == std::vector<double>{0, 0.4, 0.4, 0});
}

TEST_CASE("a fused BW with mem_b > 0 holds B's gradients while it runs", "[tuner][pipeline]") {
  // One stage, two microbatches, GPipe: F0 F1 BW0 BW1. F allocates 10, B creates 4 bytes of
  // gradients (held from BW's start) and W frees -mem_w at BW's end.
  StageCosts c = per_device({1}, {1}, {0});
  c.mem_f = {10};
  c.mem_b = {4};
  PipelineScheme gpipe = schedule_registry().find("gpipe").value().kind->build(1, 2, {}, c).value();
  SECTION("W frees everything: peak 2 x 10 + 4 = 24") {
    c.mem_w = {-14};
    auto r = simulate_pipeline(gpipe, c);
    REQUIRE(r.ok());
    CHECK(r.value().peak_memory[0] == Approx(24));
  }
  SECTION("2 bytes per microbatch stay: 10, 20, 24 -> 22, 26 -> 24; peak 26") {
    c.mem_w = {-2};
    auto r = simulate_pipeline(gpipe, c);
    REQUIRE(r.ok());
    CHECK(r.value().peak_memory[0] == Approx(26));
  }
}

TEST_CASE("stage costs: static memory, FLOPs, memory limits and deltas must be finite and in range", "[tuner][pipeline]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  StageCosts good = per_device({1, 1}, {1, 1}, {0.1, 0});
  REQUIRE(good.check("s.json").ok());
  auto broken = [&](auto change) {
    StageCosts c = good;
    change(c);
    auto ok = c.check("s.json");
    REQUIRE_FALSE(ok.ok());
    return ok.error().message;
  };
  CHECK_THAT(broken([](StageCosts& c) { c.static_memory[1] = -1; }), Catch::Contains("s.json: static_memory[1]"));
  CHECK_THAT(broken([&](StageCosts& c) { c.flops[0] = nan; }), Catch::Contains("s.json: flops[0]"));
  CHECK_THAT(broken([](StageCosts& c) { c.max_mem = {80, -1}; }), Catch::Contains("s.json: max_mem[1]"));
  CHECK_THAT(broken([&](StageCosts& c) { c.mem_b[0] = nan; }), Catch::Contains("s.json: mem_b[0]"));
  CHECK_THAT(broken([&](StageCosts& c) { c.mem_f[1] = nan; }), Catch::Contains("s.json: mem_f[1]"));
  // Finite, but 2^22 tasks of it add up past the largest double (1.8e308): times of inf before.
  CHECK_THAT(broken([](StageCosts& c) { c.f[0] = 1e308; }), Catch::Contains("s.json: cost_f[0] is 1e+308: at most"));
  CHECK_THAT(broken([](StageCosts& c) { c.mem_b[1] = 1e300; }), Catch::Contains("s.json: mem_b[1] is 1e+300: at most"));
  {
    StageCosts large = good;
    large.f[0] = 1e290;  // 2^22 x 1e290 = 4.2e296: sums stay finite
    CHECK(large.check("s.json").ok());
  }
  CHECK_THAT(broken([](StageCosts& c) {  // 1 byte over 1e-300 bytes/s: a copy of 1e300 s
               c.offload = {1, 0};
               c.mem_f = {2, 0};
               c.host_bandwidth = {1e-300, 1e-300};
             }),
             Catch::Contains("s.json: offload[0]") && Catch::Contains("take longer than a schedule can add up"));
  // The file reader: max_mem must be a size > 0 (leave it out for no limit), static_memory >= 0.
  const std::string base = R"({"n_stages": 2, "n_micro": 2, "cost_f": 1, "cost_b": 1, "cost_w": 1)";
  for (const std::string field : {R"("max_mem": -1)", R"("max_mem": 0)", R"("max_mem": [80, -1])",
                                  R"("static_memory": [5, -3])", R"("flops": -1)"}) {
    INFO(field);
    auto r = read_stage_costs_json(base + ", " + field + "}", "f.json");
    REQUIRE_FALSE(r.ok());
    const std::string key = field.substr(1, field.find('"', 1) - 1);
    CHECK_THAT(r.error().message, Catch::Contains("f.json") && Catch::Contains(key));
  }
  // cost_comm as the p - 1 hops between neighbours.
  auto hops = read_stage_costs_json(base + R"(, "cost_comm": [0.25]})", "f.json");
  REQUIRE(hops.ok());
  CHECK(hops.value().first.comm == std::vector<double>{0.25, 0});
}

TEST_CASE("schedules are looked up by name in a registry that others can extend", "[tuner][pipeline]") {
  const ScheduleRegistry& builtin = schedule_registry();
  auto v3 = builtin.find("interleaved:3");
  REQUIRE(v3.ok());
  CHECK(v3.value().layout.chunks == 3);
  CHECK(builtin.find("interleaved").value().layout.chunks == 2);
  CHECK(builtin.find("zbv").value().layout.v_shape);
  CHECK_THAT(builtin.find("nosuch").error().message,
             Catch::Contains("gpipe, 1f1b, interleaved[:V], zb, zbv"));
  CHECK_FALSE(builtin.find("interleaved:").ok());
  CHECK_FALSE(builtin.find("interleaved:0").ok());
  // Megatron's interleaved warm-up, 2(p-d-1) + (V-1)p, holds twice 1F1B's p-d-1 microbatches at V = 1: one chunk is 1f1b.
  CHECK_THAT(builtin.find("interleaved:1").error().message, Catch::Contains("1f1b"));
  CHECK_THAT(builtin.help(), Catch::Contains("zbv: "));
  CHECK(stage_placement(3, {2, true}) == std::vector<int>{0, 1, 2, 2, 1, 0});
  CHECK(stage_placement(3, {2, false}) == std::vector<int>{0, 1, 2, 0, 1, 2});

  // A tuner registers its own schedule (here: GPipe under another name) and builds it by name.
  ScheduleRegistry mine = builtin;
  ScheduleKind kind;
  kind.name = "mine";
  kind.description = "test schedule";
  kind.layout = [](const std::string&) -> Result<StageLayout> { return StageLayout{}; };
  kind.build = [](int p, int m, const StageLayout&, const StageCosts&) { return make_gpipe(p, m); };
  REQUIRE(mine.add(kind).ok());
  CHECK_FALSE(mine.add(kind).ok());  // the name is taken
  auto source = stage_file_source(per_device({1, 1}, {2, 2}, {0.1, 0}));
  auto run = build_pipeline("mine", *source, 2, "n_micro", mine);
  REQUIRE(run.ok());
  // p = 2, m = 2, F = 1, BW = 2, hop 0.1: (m + p - 1)(F + BW) + 2 (p - 1) hop.
  CHECK(iteration_time(run.value().scheme, run.value().costs) == Approx(9.2));
  CHECK_FALSE(build_pipeline("mine", *source, 2, "n_micro").ok());  // not in the built-in registry
}
