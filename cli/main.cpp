// gantry: autotuning of ML execution plans. One file per verb; cli/gantry_main.cpp wires them up.
#include <csignal>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  // A reader that stops early (`gantry query list | head -1`) makes writes fail with EPIPE instead
  // of killing the process, so every verb still cleans up (a read-only open's temporary directory).
  std::signal(SIGPIPE, SIG_IGN);
  return gantry::cli::gantry_main(argc, argv);
}
