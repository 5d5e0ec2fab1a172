#pragma once
// Real processes for the cluster tests: core's ChildProcess, and polling with a bound.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "core/child_process.hpp"
#include "core/json_util.hpp"

namespace gantry::testing {

using gantry::ChildProcess;

// Polls `done` every 20 ms for at most `seconds`; whether it came true.
inline bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Whether process `pid` has ended: gone, or a zombie its (new) parent has not reaped yet.
inline bool process_gone(int pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string id, name, state;
  stat >> id >> name >> state;
  return state == "Z";
}

// A whole text file ("" if it cannot be read).
inline std::string read_text(const std::string& path) {
  auto text = read_text_file(path);
  return text ? text.value() : std::string();
}

}  // namespace gantry::testing
