#pragma once
// A log of things that may come in floods (malformed messages from peers): at most a line a
// second, each with the count so far, so that a peer sending garbage cannot fill the log (a
// helper's flood of 9,000 bad messages wrote 9,000 lines).
#include <chrono>
#include <string>

#include "actors/log_line.hpp"

namespace gantry {

class RateLimitedLog {
 public:
  // Logs "gantry: WHAT (N so far)" unless a line was logged less than a second ago.
  void note(const std::string& what, long so_far) {
    const auto now = std::chrono::steady_clock::now();
    if (logged_ && now - last_ < std::chrono::seconds(1)) return;
    logged_ = true;
    last_ = now;
    log_line("gantry: " + what + " (" + std::to_string(so_far) + " so far)");
  }

 private:
  bool logged_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace gantry
