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

struct ChildOptions {
  // The child leads a process group of its own, so a terminal's Ctrl-C meant for the caller does
  // not reach it (the caller ends it).
  bool own_process_group = false;
  // Its stdin and stdout are one socket to the caller (send_line, read_line) instead of /dev/null
  // and the log; stderr alone goes to the log.
  bool talk = false;
};

class ChildProcess {
 public:
  // Starts args[0] (a path, or a name looked up on PATH) with args; throws std::runtime_error
  // naming the program when it cannot be started (no such file, not executable).
  ChildProcess(const std::vector<std::string>& args, std::string log, ChildOptions options = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string log() const;  // what it has written so far ("" if the log cannot be read)
  void signal(int sig);
  // The exit status (or 128 + signal), or -1 if it still runs after `seconds`. A child that cannot
  // be waited for (reaped elsewhere) counts as ended with status 255.
  int wait(double seconds);
  // SIGTERM, then SIGKILL after `grace` seconds (to its whole process group when it leads one);
  // its status once it has ended.
  int stop(double grace = 5);
  long rss_kb() const;         // resident memory in kB (0 once it has ended)
  double cpu_seconds() const;  // CPU time (user + system, all threads) used so far, in seconds

  // With ChildOptions::talk: one line to its stdin (false when it can no longer be written: the
  // child has closed it or ended), and the next line of its stdout, without the newline: 1 when
  // one came, 0 when none came within `seconds`, -1 when the child closed its stdout (or ended).
  bool send_line(const std::string& line);
  int read_line(std::string* line, double seconds);

 private:
  std::string log_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = -1;
  bool own_group_ = false;
  int talk_fd_ = -1;    // our end of the socket (talk)
  std::string unread_;  // what was read beyond the last line
};

}  // namespace gantry
