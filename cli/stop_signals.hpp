#pragma once
// Ctrl-C, SIGTERM and SIGHUP as a request to stop: while a StopSignals lives they set a flag that
// long-running verbs poll (a tuning job ends CANCELLED with its best; a coordinator or worker shuts
// down cleanly). The same signal again kills at once; the previous handlers come back at the end.
#include <atomic>
#include <csignal>

namespace gantry::cli {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The flag: set by the first of the signals.
  static const std::atomic<bool>& requested();

 private:
  struct sigaction old_[3];
};

}  // namespace gantry::cli
