#include <catch2/catch.hpp>

#include <functional>
#include <random>

#include "pipeline_fixtures.hpp"
#include "tuner/pipeline/partition.hpp"

using namespace gantry;
using gantry::testing::for_each_partition;

namespace {

// Stage s's sum of values[s] over its layers.
std::vector<double> stage_sums(const std::vector<std::vector<double>>& values, const Partition& partition) {
  std::vector<double> sums(partition.size(), 0.0);
  for (std::size_t s = 0; s < partition.size(); ++s)
    for (int i = partition[s].first; i < partition[s].second; ++i) sums[s] += values[s][i];
  return sums;
}

}  // namespace

TEST_CASE("uniform partitions spread the remainder over the first stages", "[tuner][pipeline]") {
  auto p = partition_uniform(10, 4);
  REQUIRE(p.ok());
  CHECK(p.value() == Partition{{0, 3}, {3, 6}, {6, 8}, {8, 10}});
  CHECK_FALSE(partition_uniform(3, 4).ok());
}

TEST_CASE("min-max partitions find the smallest bottleneck", "[tuner][pipeline]") {
  const std::vector<double> weights = {1, 1, 1, 1, 8, 1, 1, 1, 1, 4};
  auto p = partition_min_max(weights, 3);
  REQUIRE(p.ok());
  double worst = 0;
  for (auto [first, end] : p.value()) {
    double sum = 0;
    for (int i = first; i < end; ++i) sum += weights[i];
    worst = std::max(worst, sum);
    CHECK(end > first);
  }
  CHECK(worst == 8);  // [1 1 1 1] [8] [1 1 1 1 4]
  CHECK(p.value().front().first == 0);
  CHECK(p.value().back().second == 10);
  // Brute force on every 3-way split agrees.
  double best = 1e300;
  for (int a = 1; a < 9; ++a)
    for (int b = a + 1; b < 10; ++b) {
      double s1 = 0, s2 = 0, s3 = 0;
      for (int i = 0; i < 10; ++i) (i < a ? s1 : i < b ? s2 : s3) += weights[i];
      best = std::min(best, std::max({s1, s2, s3}));
    }
  CHECK(worst == best);
}

TEST_CASE("min-max partitions with a weight per stage: the brute force's bottleneck", "[tuner][pipeline]") {
  // Stages on devices of different speeds: a layer weighs its time on the stage's device.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int stages = std::uniform_int_distribution<int>(1, 4)(rng);
    const int layers = std::uniform_int_distribution<int>(stages, 9)(rng);
    std::vector<double> base;
    for (int i = 0; i < layers; ++i) base.push_back(std::uniform_real_distribution<double>(0.5, 4)(rng));
    std::vector<std::vector<double>> weights;
    for (int s = 0; s < stages; ++s) {
      const double slowdown = std::uniform_int_distribution<int>(0, 1)(rng) ? 1.0 : 3.17;
      weights.emplace_back();
      for (double b : base) weights.back().push_back(b * slowdown);
    }
    auto p = partition_min_max_per_stage(weights);
    REQUIRE(p);
    REQUIRE(check_partition(p.value(), layers, stages, "test"));
    auto bottleneck = [&](const Partition& q) {
      const std::vector<double> sums = stage_sums(weights, q);
      return *std::max_element(sums.begin(), sums.end());
    };
    double best = 1e300;
    for_each_partition(layers, stages, [&](const Partition& q) { best = std::min(best, bottleneck(q)); });
    INFO("trial " << trial);
    CHECK(bottleneck(p.value()) == Approx(best));
  }
  CHECK_FALSE(partition_min_max_per_stage({{1, 2, 3}, {1, 2}}));
}

TEST_CASE("min-max partitions within a budget per stage: the brute force's bottleneck among those that fit", "[tuner][pipeline]") {
  // Memory: a stage's layers' sizes (parameters, and activations times the microbatches it
  // holds, which differ per stage) must fit its capacity.
  std::mt19937 rng(23);
  int feasible = 0, infeasible = 0, binding = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int stages = std::uniform_int_distribution<int>(1, 4)(rng);
    const int layers = std::uniform_int_distribution<int>(stages, 9)(rng);
    std::vector<std::vector<double>> weights(stages), sizes(stages);
    std::vector<double> capacity;
    for (int s = 0; s < stages; ++s) {
      for (int i = 0; i < layers; ++i) {
        weights[s].push_back(std::uniform_real_distribution<double>(0.5, 4)(rng));
        sizes[s].push_back(std::uniform_real_distribution<double>(0.5, 4)(rng));
      }
      capacity.push_back(std::uniform_real_distribution<double>(2, 2 + 12.0 * layers / stages)(rng));
    }
    double best = 1e300, unbounded = 1e300;
    for_each_partition(layers, stages, [&](const Partition& q) {
      const std::vector<double> w = stage_sums(weights, q), z = stage_sums(sizes, q);
      const double worst = *std::max_element(w.begin(), w.end());
      unbounded = std::min(unbounded, worst);
      for (int s = 0; s < stages; ++s)
        if (z[s] > capacity[s]) return;
      best = std::min(best, worst);
    });
    INFO("trial " << trial);
    auto p = partition_min_max_within(weights, sizes, capacity);
    if (best == 1e300) {
      CHECK_FALSE(p);
      ++infeasible;
      continue;
    }
    REQUIRE(p);
    REQUIRE(check_partition(p.value(), layers, stages, "test"));
    ++feasible;
    binding += best > unbounded + 1e-9;
    const std::vector<double> w = stage_sums(weights, p.value()), z = stage_sums(sizes, p.value());
    for (int s = 0; s < stages; ++s) CHECK(z[s] <= capacity[s]);
    CHECK(*std::max_element(w.begin(), w.end()) == Approx(best));
  }
  // The draws exercise all three cases: no fit, a budget that binds, and one that does not.
  CHECK(infeasible >= 10);
  CHECK(binding >= 10);
  CHECK(feasible - binding >= 10);
  CHECK_FALSE(partition_min_max_within({{1, 2}, {1, 2}}, {{1, 1}}, {5, 5}));  // sizes for one stage only
  CHECK_FALSE(partition_min_max_within({{1, 2}, {1, 2}}, {{1, 1}, {1, 1}}, {}));  // sizes without capacities
}
