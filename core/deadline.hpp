#pragma once
// Deadlines on the steady clock, `seconds` from now. Beyond a year is a year: a time budget of
// 3,000,000 hours must not overflow the clock's 64-bit nanoseconds into a deadline in the past.
#include <algorithm>
#include <chrono>

namespace gantry {

// The longest time gantry waits for anything, or gives a task: a year. Longer budgets are accepted
// (a year is then their horizon); times on the wire are within it.
inline constexpr double kLongestWait = 365.0 * 86400;

inline std::chrono::steady_clock::time_point deadline_after(double seconds) {
  const double bounded = std::min(std::max(seconds, 0.0), kLongestWait);
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(bounded));
}

}  // namespace gantry
