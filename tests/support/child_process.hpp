#pragma once
// A child process for tests that need real processes (a coordinator and workers on loopback):
// started with posix_spawn (not fork: the test process has threads, and a forked child of a
// threaded process may block before its exec), its stdout and stderr in a log file, killed
// (SIGKILL) if the test ends while it still runs.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gantry::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Polls `done` every 20 ms for at most `seconds`; whether it came true.
inline bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& args, std::string log) : log_(std::move(log)) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    const int rc = posix_spawn(&pid_, argv[0], &files, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  }
  ~ChildProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string log() const { return read_text(log_); }
  void signal(int sig) { kill(pid_, sig); }
  // The exit status (or 128 + signal), or -1 if it still runs after `seconds`.
  int wait(double seconds) {
    int status = 0;
    const bool ended = wait_until([&] { return exited_ || waitpid(pid_, &status, WNOHANG) == pid_ ? (exited_ = true) : false; }, seconds);
    if (!ended) return -1;
    if (status_ < 0) status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return status_;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = -1;
};

}  // namespace gantry::testing
