#pragma once
// Multiplicative log-normal noise on op times, drawn as common random numbers: the factor of op i
// in draw k depends only on (seed, k, i), never on the order in which ops start. Two placements
// evaluated with the same seed see the same noise on every op, so search compares them on equal
// terms and optimizes the expected makespan over a fixed set of draws.
#include <cmath>
#include <cstdint>

namespace gantry {

inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The seed of draw k of a run seeded with `seed` (draw 0 uses the seed itself).
inline std::uint64_t noise_draw_seed(std::uint64_t seed, int k) {
  return k == 0 ? seed : splitmix64(seed ^ splitmix64(0x6a09e667f3bcc909ull + static_cast<std::uint64_t>(k)));
}

// exp(sigma * z - sigma^2 / 2) with z standard normal (Box-Muller): log-normal with mean 1.
inline double noise_factor(std::uint64_t draw_seed, std::int32_t op, double sigma) {
  const std::uint64_t a = splitmix64(draw_seed * 0xd1b54a32d192ed03ull + static_cast<std::uint32_t>(op));
  const std::uint64_t b = splitmix64(a);
  const double u1 = (static_cast<double>(a >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  const double u2 = (static_cast<double>(b >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return std::exp(sigma * z - 0.5 * sigma * sigma);
}

}  // namespace gantry
