#pragma once
// Small text helpers shared by readers, jobs and commands: file kinds by extension, byte counts,
// durations.
#include <cstdio>
#include <string>
#include <string_view>

namespace gantry {

inline bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// "512 B", "1.5 KiB", "782.9 GiB", "1.2 TiB": one decimal past bytes.
inline std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buffer;
}

// "1.62237 s", "0.5 s": seconds to `significant` digits (%g: no trailing zeros).
inline std::string format_seconds(double seconds, int significant = 6) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*g s", significant, seconds);
  return buffer;
}

}  // namespace gantry
