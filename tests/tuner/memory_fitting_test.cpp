// Partitions that fit a share of the warm-up depth in memory (memory_fitting_candidates): checked
// against a brute force over every partition, and on a memory-bound model against the
// time-balanced partition by simulation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "pipeline_fixtures.hpp"
#include "tuner/pipeline/memory_fitting.hpp"

using namespace gantry;
using namespace gantry::testing;

namespace {

// The largest stage time of a partition, stage s on device s (F + B + W = 3 x the layers' times,
// times the device's slowdown).
double stage_bottleneck(const Partition& partition, const std::vector<double>& time, const LayerSourceOptions& o) {
  double worst = 0;
  for (std::size_t s = 0; s < partition.size(); ++s) {
    double t = 0;
    for (int i = partition[s].first; i < partition[s].second; ++i)
      t += 3 * time[i] * (o.slowdown.empty() ? 1.0 : o.slowdown[s]);
    worst = std::max(worst, t);
  }
  return worst;
}

// Whether stage s of `partition` (on device s) holds its layers' static memory and, for each of
// ceil(tenths (p - s) / 10) microbatches (at least 1, at most m), F's activations and B's
// gradients (mem_b > 0 when more than the activation is held from B to W) within its device's
// limit.
bool fits_memory(const Partition& partition, int tenths, int m, const LayerSourceOptions& o) {
  const int p = static_cast<int>(partition.size());
  const double b_gradients = std::max(0.0, (o.held - 1) * o.act);  // the fixture's mem_b = -(1 - held) act
  for (int s = 0; s < p; ++s) {
    const double limit = o.device_mem.empty() ? o.max_mem : o.device_mem[s];
    const double share = std::ceil(tenths * (p - s) / 10.0 - 1e-9);
    const double depth = std::min<double>(m, std::max(1.0, share));
    const int layers = partition[s].second - partition[s].first;
    if (limit > 0 && layers * (o.params + depth * (o.act + b_gradients)) > limit + 1e-9) return false;
  }
  return true;
}

// Every partition of `layers` into `stages` non-empty ranges.
std::vector<Partition> all_partitions(int layers, int stages) {
  std::vector<Partition> out;
  for_each_partition(layers, stages, [&](const Partition& p) { out.push_back(p); });
  return out;
}

// The layer model of `time` and `o` on p devices: its memory-fitting candidates against a brute
// force over every partition (stage s on device s). Each share of the depth that some partition
// fits has a candidate that fits it with the smallest bottleneck, each candidate is such a
// partition on one stage per device with ZB-H1's rules, and no candidate comes twice. Counts the
// shares that some partition fits and those none does.
void check_against_brute_force(const std::vector<double>& time, int p, int m, const LayerSourceOptions& o,
                               int& shares_that_fit, int& shares_that_do_not) {
  const int layers = static_cast<int>(time.size());
  auto source = layer_source(time, p, o);
  auto candidates = memory_fitting_candidates(*source, layers, m);
  REQUIRE(candidates);
  const std::vector<PipelineCandidate>& found = candidates.value();
  const auto bottleneck = [&](const Partition& q) { return stage_bottleneck(q, time, o); };
  const auto fits = [&](const Partition& q, int tenths) { return fits_memory(q, tenths, m, o); };
  const std::vector<Partition> every = all_partitions(layers, p);
  auto smallest_bottleneck = [&](int tenths) {
    double best = 1e300;
    for (const Partition& q : every)
      if (fits(q, tenths)) best = std::min(best, bottleneck(q));
    return best;
  };
  for (int tenths = 10; tenths >= 1; --tenths) {
    const double best = smallest_bottleneck(tenths);
    if (best == 1e300) {
      ++shares_that_do_not;
      continue;
    }
    ++shares_that_fit;
    INFO("share " << tenths << "/10, best bottleneck " << best);
    CHECK(std::any_of(found.begin(), found.end(), [&](const PipelineCandidate& c) {
      return fits(c.partition, tenths) && bottleneck(c.partition) == Approx(best);
    }));
  }
  for (const PipelineCandidate& c : found) {
    CHECK(c.placement.size() == static_cast<std::size_t>(p));
    for (int s = 0; s < p && s < static_cast<int>(c.placement.size()); ++s) CHECK(c.placement[s] == s);
    CHECK(c.rules.in_flight_limit == default_rules(c.placement, p).in_flight_limit);
    bool some_share = false;
    for (int tenths = 10; tenths >= 1 && !some_share; --tenths)
      some_share = fits(c.partition, tenths) && bottleneck(c.partition) == Approx(smallest_bottleneck(tenths));
    CHECK(some_share);
  }
  for (std::size_t a = 0; a < found.size(); ++a)
    for (std::size_t b = a + 1; b < found.size(); ++b) CHECK_FALSE(found[a] == found[b]);
}

// A drawn model: its layer times, devices, microbatches and fixture options.
struct Draw {
  std::vector<double> time;
  int p = 0, m = 0;
  LayerSourceOptions o;
};

// check_against_brute_force on `trials` models from `draw`, and enough shares that some
// partition fits and enough that none does, so both cases are checked.
void check_draws(int trials, const std::function<Draw()>& draw, int min_fit, int min_not_fit) {
  int shares_that_fit = 0, shares_that_do_not = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const Draw d = draw();
    INFO("trial " << trial);
    check_against_brute_force(d.time, d.p, d.m, d.o, shares_that_fit, shares_that_do_not);
  }
  INFO(shares_that_fit << " shares fit, " << shares_that_do_not << " do not");
  CHECK(shares_that_fit >= min_fit);
  CHECK(shares_that_do_not >= min_not_fit);
}

}  // namespace

TEST_CASE("memory-fitting partitions: the brute force's smallest bottleneck at each share of the warm-up depth",
          "[tuner][pipeline]") {
  std::mt19937 rng(5);
  check_draws(30, [&] {
    Draw d;
    d.p = std::uniform_int_distribution<int>(2, 4)(rng);
    const int layers = std::uniform_int_distribution<int>(d.p, 10)(rng);
    d.m = 2 * d.p;
    for (int i = 0; i < layers; ++i) d.time.push_back(std::uniform_real_distribution<double>(0.5, 3)(rng));
    d.o.act = 1;
    d.o.held = std::uniform_int_distribution<int>(0, 1)(rng) ? 1.5 : 0.0;  // B's gradients outlast the activations
    d.o.params = std::uniform_real_distribution<double>(1, 6)(rng);
    d.o.max_mem = std::uniform_real_distribution<double>(0.6, 2.0)(rng) * (d.o.params + d.p * d.o.act) * layers / d.p;
    d.o.method = PartitionMethod::compute;
    return d;
  }, 150, 40);
  // Without a memory limit there is nothing to fit.
  CHECK(memory_fitting_candidates(*layer_source({1, 2, 3, 4}, 2), 4, 4).value().empty());
}

TEST_CASE("memory-fitting partitions: on a memory-bound model they beat the time-balanced partition", "[tuner][pipeline]") {
  // 20 equal layers on 3 devices: the balanced 6 / 7 / 7 layers leave the first stage room for
  // fewer microbatches than its warm-up needs; lighter first stages hold more.
  LayerSourceOptions o;
  o.act = 1;
  o.params = 4;
  o.max_mem = 41.4;
  o.method = PartitionMethod::compute;
  auto source = layer_source(std::vector<double>(20, 1.0), 3, o);
  CandidateEvaluator evaluator(*source, 12);
  auto balanced = layout_candidate(*source, {1, false});
  REQUIRE(balanced);
  auto balanced_time = evaluator.evaluate(balanced.value());
  REQUIRE(balanced_time);
  auto found = memory_fitting_candidates(*source, 20, 12);
  REQUIRE(found);
  double best = 1e300;
  for (const PipelineCandidate& c : found.value()) {
    auto r = evaluator.evaluate(c);
    REQUIRE(r);
    best = std::min(best, r.value().iteration_time);
  }
  INFO("balanced " << balanced.value().partition.size() << " stages: " << balanced_time.value().iteration_time);
  CHECK(best < 0.9 * balanced_time.value().iteration_time);
}

TEST_CASE("memory-fitting partitions on unlike devices: each stage weighed and fitted on its own device", "[tuner][pipeline]") {
  // Three devices, the middle one half as fast, each with its own memory; the last without a limit.
  std::mt19937 rng(9);
  check_draws(20, [&] {
    Draw d;
    d.p = 3;
    d.m = 6;
    const int layers = std::uniform_int_distribution<int>(4, 9)(rng);
    for (int i = 0; i < layers; ++i) d.time.push_back(std::uniform_real_distribution<double>(0.5, 3)(rng));
    d.o.act = 1;
    d.o.params = std::uniform_real_distribution<double>(1, 4)(rng);
    for (int k = 0; k < 2; ++k)
      d.o.device_mem.push_back(std::uniform_real_distribution<double>(0.1, 1.5)(rng) * (d.o.params + 3 * d.o.act) * layers / d.p);
    d.o.device_mem.push_back(0);  // none
    d.o.slowdown = {1, 2, 1};
    d.o.method = PartitionMethod::compute;
    return d;
  }, 80, 30);
}
