#include <catch2/catch.hpp>

#include "tuner/pipeline/partition.hpp"

using namespace gantry;

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
