#pragma once
// A program run as a child process (a gantry coordinator or worker in the cluster bench and
// tests, gantry-exec for an executor measuring through it): started with posix_spawnp (not fork:
// the caller has threads, and a forked child of a threaded process may block before its exec),
// its stdin from /dev/null, its stdout and stderr in a log file, its signals at their defaults and
// unblocked (not the caller's mask or ignored SIGPIPE). When the object goes before the child has
// ended, the child gets SIGTERM (a clean shutdown), then SIGKILL if it is still there after 5 s.
#include <sys/types.h>

#include <string>
#include <vector>

namespace gantry {

class ChildProcess {
 public:
  // Starts args[0] (a path, or a name looked up on PATH) with args; throws std::runtime_error
  // naming the program when it cannot be started (no such file, not executable). With
  // `own_process_group`, the child leads a process group of its own, so a terminal's Ctrl-C meant
  // for the caller does not reach it (the caller ends it).
  ChildProcess(const std::vector<std::string>& args, std::string log, bool own_process_group = false);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string log() const;  // what it has written so far ("" if the log cannot be read)
  void signal(int sig);
  // The exit status (or 128 + signal), or -1 if it still runs after `seconds`. A child that cannot
  // be waited for (reaped elsewhere) counts as ended with status 255.
  int wait(double seconds);
  // SIGTERM, then SIGKILL after `grace` seconds; its status once it has ended.
  int stop(double grace = 5);
  long rss_kb() const;         // resident memory in kB (0 once it has ended)
  double cpu_seconds() const;  // CPU time (user + system, all threads) used so far, in seconds

 private:
  std::string log_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = -1;
};

}  // namespace gantry
