#include "executor/named_tensor.hpp"

#include <cmath>

namespace gantry {

namespace {

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

// splitmix64: a full-period generator whose every output is a good 64-bit hash of the counter.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1]: never 0, so log() below is finite.
  double unit() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }
};

}  // namespace

std::vector<float> named_tensor_values(const std::string& name, std::int64_t count, double scale, bool integer) {
  std::vector<float> values(static_cast<std::size_t>(count > 0 ? count : 0));
  SplitMix rng{fnv1a(name)};
  if (integer) {
    const double limit = std::floor(scale);
    for (float& v : values) v = static_cast<float>(std::min(limit - 1, std::floor(rng.unit() * limit)));
    return values;
  }
  constexpr double kTwoPi = 6.283185307179586;
  for (std::size_t i = 0; i < values.size(); i += 2) {
    const double radius = std::sqrt(-2 * std::log(rng.unit())) * scale;
    const double angle = kTwoPi * rng.unit();
    values[i] = static_cast<float>(radius * std::cos(angle));
    if (i + 1 < values.size()) values[i + 1] = static_cast<float>(radius * std::sin(angle));
  }
  return values;
}

}  // namespace gantry
