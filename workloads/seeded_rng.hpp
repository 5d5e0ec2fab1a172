#pragma once
// The random draws of the graph generators, computed by hand: std::mt19937_64 is fully specified
// by the standard but the std distributions are not, so a seed gives the same graph everywhere.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace gantry::workload_detail {

class SeededRng {
 public:
  explicit SeededRng(std::uint64_t seed) : engine_(seed) {}
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n); the modulo bias is below 2^-40 for the sizes used here.
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(engine_() % static_cast<std::uint64_t>(n)); }
  // exp(u * spread) with u uniform in [-1, 1): log-uniform in [1/e^spread, e^spread].
  double log_uniform(double spread) { return std::exp((2 * uniform() - 1) * spread); }
  // Knuth's multiplication method; for small means (a few tens).
  std::int64_t poisson(double mean) {
    const double limit = std::exp(-mean);
    std::int64_t k = 0;
    for (double product = uniform(); product > limit; product *= uniform()) ++k;
    return k;
  }
  // Failures before the first success of a Bernoulli(p) sequence, 0 < p < 1.
  std::int64_t geometric(double p) {
    // Clamped so that a tiny p cannot overflow the integer; callers stop at a layer's width anyway.
    const double gap = std::floor(std::log1p(-uniform()) / std::log1p(-p));
    return static_cast<std::int64_t>(std::min(gap, 1e15));
  }

 private:
  std::mt19937_64 engine_;
};

// The first op of each of `layers` layers, plus the total: every layer gets one op and the rest
// land on uniformly random layers.
inline std::vector<std::int64_t> random_layer_starts(SeededRng& rng, std::int64_t ops, std::int64_t layers) {
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(layers), 1);
  for (std::int64_t i = layers; i < ops; ++i) ++sizes[rng.below(layers)];
  std::vector<std::int64_t> start(1, 0);
  for (std::int64_t size : sizes) start.push_back(start.back() + size);
  return start;
}

}  // namespace gantry::workload_detail
