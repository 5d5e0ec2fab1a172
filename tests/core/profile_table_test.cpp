#include <catch2/catch.hpp>

#include <cmath>

#include "core/cost_model.hpp"
#include "core/profile_table.hpp"

using namespace gantry;

TEST_CASE("running statistics merge to the statistics of all samples", "[core]") {
  const std::vector<double> a = {1, 4, 2, 8}, b = {3, 3, 9};
  RunningStats left, right;
  for (double x : a) left.add(x);
  for (double x : b) right.add(x);
  left.merge(right);
  // Two-pass mean and sample variance of all seven samples.
  double mean = 0;
  for (double x : a) mean += x / 7;
  for (double x : b) mean += x / 7;
  double ss = 0;
  for (double x : a) ss += (x - mean) * (x - mean);
  for (double x : b) ss += (x - mean) * (x - mean);
  CHECK(left.count == 7);
  CHECK(left.mean == Approx(mean));
  CHECK(left.variance() == Approx(ss / 6));
}

TEST_CASE("profiles give exact times, interpolate a family in log-log and fit links", "[core]") {
  ProfileTable t;
  t.add("CPU", {"matmul/f32", "mm-small", 1e6, {}}, 1e-3);
  t.add("CPU", {"matmul/f32", "mm-small", 1e6, {}}, 3e-3);  // mean 2e-3
  t.add("CPU", {"matmul/f32", "mm-big", 4e6, {}}, 4e-3);
  CHECK(*t.op_time("CPU", {"matmul/f32", "mm-small", 1e6, {}}) == Approx(2e-3));
  // Without features the distance is in log2(work). Halfway between (1e6, 2 ms) and (4e6, 4 ms)
  // both weigh the same: the geometric mean of their 2e-9 and 1e-9 s per flop, times 2e6 flops.
  CHECK(*t.op_time("CPU", {"matmul/f32", "other", 2e6, {}}) == Approx(2e6 * std::sqrt(2e-9 * 1e-9)));
  // Beyond the largest measured work the largest's efficiency holds: 8e6 flops at 1e-9 s per flop.
  CHECK(*t.op_time("CPU", {"matmul/f32", "huge", 8e6, {}}) == Approx(8e-3));
  // Between two measured works the time lies on the power law through both, whatever the weights:
  // 1e4 in 10 us and 1e6 in 100 us (a fixed cost shows as a slope below 1) give 3e5 in
  // 10 us x 30^0.5, not 3e5 times a mean time per unit of work.
  t.add("CPU", {"rmsnorm/f32", "n-small", 1e4, {}}, 1e-5);
  t.add("CPU", {"rmsnorm/f32", "n-big", 1e6, {}}, 1e-4);
  CHECK(*t.op_time("CPU", {"rmsnorm/f32", "n-mid", 3e5, {}}) == Approx(1e-5 * std::sqrt(30.0)));
  // Three shapes: the line is fitted with the weights. Works 1e4, 1e5, 1e6 (log2 distances L, 0, L
  // from an op of 1e5 flops, L = log2 10) and times 1, 4, 10 us: the slope through the symmetric
  // outer pair, and at the middle the weighted mean of the three log times.
  t.add("CPU", {"silu_mul/f32", "u-1", 1e4, {}}, 1e-6);
  t.add("CPU", {"silu_mul/f32", "u-2", 1e5, {}}, 4e-6);
  t.add("CPU", {"silu_mul/f32", "u-3", 1e6, {}}, 1e-5);
  const double far = 1 / std::pow(std::log2(10.0) + 0.25, 2), near = 1 / (0.25 * 0.25);
  CHECK(*t.op_time("CPU", {"silu_mul/f32", "u-mid", 1e5, {}}) ==
        Approx(std::exp((far * std::log(1e-6) + near * std::log(4e-6) + far * std::log(1e-5)) / (2 * far + near))));
  // A larger op measured faster (noise) makes no negative slope: halfway, the two times' geometric mean.
  t.add("CPU", {"softmax/f32", "s-small", 1e4, {}}, 2e-5);
  t.add("CPU", {"softmax/f32", "s-big", 1e6, {}}, 1e-5);
  CHECK(*t.op_time("CPU", {"softmax/f32", "s-mid", 1e5, {}}) == Approx(std::sqrt(2e-5 * 1e-5)));
  // Features, when there are, place an op: equal features to a measured shape give its efficiency.
  t.add("CPU", {"matmul/bf16", "matmul/bf16/a", 1e6, {8, 8, 8}}, 1e-3);
  t.add("CPU", {"matmul/bf16", "matmul/bf16/b", 1e6, {4, 12, 8}}, 9e-3);
  const double at_a = *t.op_time("CPU", {"matmul/bf16", "matmul/bf16/a2", 2e6, {8, 8, 8}});
  const double d_b = std::sqrt(16.0 + 16.0), wa = 1 / (0.25 * 0.25), wb = 1 / ((d_b + 0.25) * (d_b + 0.25));
  CHECK(at_a == Approx(2e6 * std::exp((wa * std::log(1e-9) + wb * std::log(9e-9)) / (wa + wb))));
  CHECK_FALSE(t.op_time("GPU", {"matmul/f32", "mm-small", 1e6, {}}).has_value());
  CHECK_FALSE(t.op_time("CPU", {"add/f32", "a", 1e6, {}}).has_value());

  for (double bytes : {1e3, 1e5, 1e7}) t.add("CPU->CPU", transfer_signature(bytes), 2e-5 + bytes / 4e9);
  auto fit = t.link("CPU", "CPU");
  REQUIRE(fit.has_value());
  CHECK(fit->latency == Approx(2e-5));
  CHECK(fit->bandwidth == Approx(4e9));
  CHECK_FALSE(t.link("CPU", "GPU").has_value());
  // The fit weighs relative errors: a largest size 50% slower than the line (fresh pages, say) does
  // not drag the latency that five exactly measured small sizes show down to zero, as a plain
  // least-squares line would (its intercept goes below zero here).
  ProfileTable skewed;
  for (double bytes : {1e3, 1e4, 1e5, 1e6, 1e7}) skewed.add("A->B", transfer_signature(bytes), 3e-5 + bytes / 5e9);
  skewed.add("A->B", transfer_signature(1e8), 1.5 * (3e-5 + 1e8 / 5e9));
  auto relative = skewed.link("A", "B");
  REQUIRE(relative.has_value());
  CHECK(relative->latency == Approx(3e-5).epsilon(0.1));
  // A transfer timed at zero weighs nothing: with one other size there is no line to fit.
  ProfileTable zero;
  zero.add("A->B", transfer_signature(1e3), 0);
  zero.add("A->B", transfer_signature(1e6), 1e-4);
  CHECK_FALSE(zero.link("A", "B").has_value());
  // Sizes within a factor of 4 of each other: the nominal bandwidth, and the mean time it leaves.
  ProfileTable close;
  close.add("A->B", transfer_signature(1000), 3e-6);
  close.add("A->B", transfer_signature(1010), 2e-6);
  CHECK_FALSE(close.link("A", "B").has_value());
  auto nominal = close.link("A", "B", 1e9);
  REQUIRE(nominal.has_value());
  CHECK(nominal->bandwidth == 1e9);
  CHECK(nominal->latency == Approx((3e-6 - 1000 / 1e9 + 2e-6 - 1010 / 1e9) / 2));

  // A device pair's own transfers fit first: an NVLink pair and a PCIe pair of one kind pair.
  for (double bytes : {1e3, 1e5, 1e7}) {
    t.add(transfer_pair_kind("CPU", "CPU", 0, 1), transfer_signature(bytes), 1e-6 + bytes / 100e9);
    t.add(transfer_pair_kind("CPU", "CPU", 1, 0), transfer_signature(bytes), 5e-6 + bytes / 10e9);
  }
  CHECK(t.link("CPU", "CPU", 0, std::pair{0, 1})->bandwidth == Approx(100e9));
  CHECK(t.link("CPU", "CPU", 0, std::pair{0, 1})->latency == Approx(1e-6));
  CHECK(t.link("CPU", "CPU", 0, std::pair{1, 0})->bandwidth == Approx(10e9));
  CHECK(t.link("CPU", "CPU", 0, std::pair{0, 2})->bandwidth == Approx(4e9));  // unmeasured pair: the kinds'
  CHECK(t.link("CPU", "CPU")->bandwidth == Approx(4e9));

  const Fingerprint before = t.fingerprint();
  t.add("CPU", {"matmul/f32", "mm-big", 4e6, {}}, 4e-3);  // the mean does not move
  CHECK(t.fingerprint() == before);
  t.add("CPU", {"matmul/f32", "mm-big", 4e6, {}}, 40e-3);
  CHECK(t.fingerprint() != before);
}

TEST_CASE("the cost table prefers profiles to the roofline, explicit costs to both", "[core]") {
  GraphBuilder b("g");
  OpSpec profiled;
  profiled.name = "p";
  profiled.flops = 1e9;
  b.add_op(profiled);
  OpSpec fixed = profiled;
  fixed.name = "fixed";
  fixed.cost = 0.5;
  b.add_op(fixed);
  b.add_edge(0, 1, 1e6);
  auto g = b.build();
  REQUIRE(g.ok());
  auto cluster = Cluster::load("cpu-2");
  REQUIRE(cluster.ok());
  ProfileTable t;
  t.add("CPU", op_signature(g.value(), 0), 0.25);
  for (double bytes : {1e3, 1e6}) t.add("CPU->CPU", transfer_signature(bytes), 1e-5 + bytes / 1e9);
  CostTable with(g.value(), cluster.value(), &t), without(g.value(), cluster.value());
  CHECK(with.op_time(0, 1) == Approx(0.25));
  CHECK(without.op_time(0, 1) != Approx(0.25));
  CHECK(with.op_time(1, 0) == 0.5);
  CHECK(with.transfer_time(0, 0, 1) == Approx(1e-5 + 1e6 / 1e9));
}

TEST_CASE("profiles JSON keeps every entry's statistics and refuses bad entries by position", "[core]") {
  ProfileTable t;
  t.add("CPU", {"matmul/f32", "matmul/f32/a", 2e6, {7, 8, 9}}, 1e-3);
  t.add("CPU", {"matmul/f32", "matmul/f32/a", 2e6, {7, 8, 9}}, 3e-3);
  t.add("CPU->CPU", transfer_signature(4096), 2e-5);
  auto back = profiles_from_json(profiles_to_json(t), "t.json");
  REQUIRE(back.ok());
  const auto entries = back.value().entries();
  REQUIRE(entries.size() == 2);
  for (const ProfileEntry& e : entries) {
    if (e.device_kind != "CPU") continue;
    CHECK(e.op.features == std::vector<double>{7, 8, 9});
    CHECK(e.seconds.count == 2);
    CHECK(e.seconds.mean == Approx(2e-3));
    CHECK(e.seconds.variance() == Approx(2e-6));  // samples 1 ms and 3 ms
  }
  const std::string good = R"({"kind": "CPU", "family": "f", "signature": "s", "work": 1, "count": 1, "mean": 1})";
  const std::string zero_count = R"({"kind": "CPU", "family": "f", "signature": "s", "work": 1, "count": 0, "mean": 1})";
  const std::string no_kind = R"({"family": "f", "signature": "s", "work": 1, "count": 1, "mean": 1})";
  for (const auto& [bad, why] : {std::pair{zero_count, "count must be at least 1"}, std::pair{no_kind, "kind"}}) {
    auto refused = profiles_from_json(R"({"entries": [)" + good + "," + bad + "]}", "p.json");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("p.json: $.entries[1]") && Catch::Contains(why));
  }
}

TEST_CASE("the co-run slowdown is kept per device kind, travels with the table and changes its fingerprint", "[core]") {
  ProfileTable t;
  t.add("CPU", {"matmul/f32", "matmul/f32/a", 2e6, {7, 8, 9}}, 1e-3);
  CHECK(t.co_run_slowdown("CPU") == 1.0);  // never measured
  const Fingerprint before = t.fingerprint();
  t.add_co_run_slowdown("CPU", 1.2);
  t.add_co_run_slowdown("CPU", 1.4);  // two profiling sessions: their mean
  CHECK(t.co_run_slowdown("CPU") == Approx(1.3));
  CHECK(t.co_run_slowdown("H100") == 1.0);
  CHECK(t.size() == 2);                  // the op's entry and the factor's
  CHECK(measured_signatures(t) == 1);    // only the op's is a measured time
  CHECK_FALSE(t.fingerprint() == before);
  auto back = profiles_from_json(profiles_to_json(t), "t.json");
  REQUIRE(back.ok());
  CHECK(back.value().co_run_slowdown("CPU") == Approx(1.3));
  // It is no op's time: the op still costs its own mean.
  CHECK(*back.value().op_time("CPU", {"matmul/f32", "matmul/f32/a", 2e6, {7, 8, 9}}) == Approx(1e-3));
  // The cost table gives each device its kind's factor.
  Cluster cpu = Cluster::load("cpu-2").value();
  GraphBuilder b("one");
  OpSpec op;
  op.name = "x";
  op.cost = 1;
  b.add_op(op);
  const Graph g = b.build().value();
  CostTable costs(g, cpu, &t);
  CHECK(costs.has_co_run_slowdown());
  CHECK(costs.co_run_slowdown(1) == Approx(1.3));
  CHECK_FALSE(CostTable(g, cpu).has_co_run_slowdown());
}
