#pragma once
// One line on stderr from any thread, whole (one write): the actors' notes about workers, leases
// and failures. stdout is the commands' results (tables, JSON) and must stay clean.
#include <cstdio>
#include <string>

namespace gantry {

inline void log_line(const std::string& text) {
  const std::string line = text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace gantry
