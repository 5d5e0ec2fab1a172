#pragma once
// Wall-clock time as unix seconds (with a fraction): the time stamps of stored records, jobs and
// episodes. One definition for every module.
#include <chrono>

namespace gantry {

inline double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace gantry
