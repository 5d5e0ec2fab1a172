#include "cli/stop_signals.hpp"

namespace gantry::cli {

namespace {

std::atomic<bool> g_stop{false};
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void on_stop_signal(int signal) {
  g_stop.store(true);
  std::signal(signal, SIG_DFL);  // the same signal again kills at once
}

}  // namespace

StopSignals::StopSignals() {
  g_stop.store(false);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &action, &old_[i]);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 3; ++i) sigaction(kStopSignals[i], &old_[i], nullptr);
}

const std::atomic<bool>& StopSignals::requested() { return g_stop; }

}  // namespace gantry::cli
