#pragma once
// This machine's host name, as job records and the database owner file name it ("unknown" when
// the system will not say).
#include <unistd.h>

#include <string>

namespace gantry {

inline std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

}  // namespace gantry
