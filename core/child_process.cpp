#include "core/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/json_util.hpp"

namespace gantry {

ChildProcess::ChildProcess(const std::vector<std::string>& args, std::string log, ChildOptions options)
    : log_(std::move(log)) {
  if (args.empty()) throw std::runtime_error("no program to start");
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int sockets[2] = {-1, -1};  // ours, the child's (close-on-exec: no other child inherits them)
  if (options.talk && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
    throw std::runtime_error("cannot start " + args[0] + ": no socket to talk to it: " + std::strerror(errno));
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  if (options.talk) {
    posix_spawn_file_actions_adddup2(&files, sockets[1], 0);
    posix_spawn_file_actions_adddup2(&files, sockets[1], 1);
    posix_spawn_file_actions_addopen(&files, 2, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  } else {
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  posix_spawnattr_setflags(&attributes, flags);
  const int rc = posix_spawnp(&pid_, argv[0], &files, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&files);
  if (options.talk) close(sockets[1]);
  if (rc != 0) {
    if (options.talk) close(sockets[0]);
    throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
  }
  talk_fd_ = sockets[0];
  own_group_ = options.own_process_group;
}

ChildProcess::~ChildProcess() {
  if (talk_fd_ >= 0) close(talk_fd_);  // a child reading its stdin sees the end first
  stop();
}

bool ChildProcess::send_line(const std::string& line) {
  const std::string text = line + "\n";
  for (std::size_t sent = 0; sent < text.size();) {
    const ssize_t n = send(talk_fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);  // no SIGPIPE
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

int ChildProcess::read_line(std::string* line, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (const auto newline = unread_.find('\n'); newline != std::string::npos) {
      *line = unread_.substr(0, newline);
      unread_.erase(0, newline + 1);
      return 1;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return 0;
    pollfd ready{talk_fd_, POLLIN, 0};
    const int polled = poll(&ready, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) return polled == 0 ? 0 : -1;
    char buffer[4096];
    const ssize_t n = recv(talk_fd_, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    unread_.append(buffer, static_cast<std::size_t>(n));
  }
}

int ChildProcess::stop(double grace) {
  if (exited_) return status_;
  const pid_t target = own_group_ ? -pid_ : pid_;  // a script's children too
  kill(target, SIGTERM);
  if (wait(grace) >= 0) return status_;
  kill(target, SIGKILL);
  return wait(1e9);
}

std::string ChildProcess::log() const {
  auto text = read_text_file(log_);
  return text ? text.value() : std::string();
}

void ChildProcess::signal(int sig) { kill(pid_, sig); }

int ChildProcess::wait(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (exited_) return status_;
    int status = 0;
    const pid_t waited = waitpid(pid_, &status, WNOHANG);
    if (waited == pid_) {
      exited_ = true;
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return status_;
    }
    if (waited < 0 && errno != EINTR) {  // not ours to wait for any more: never signal its pid again
      exited_ = true;
      status_ = 255;
      return status_;
    }
    if (std::chrono::steady_clock::now() >= end) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

long ChildProcess::rss_kb() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

double ChildProcess::cpu_seconds() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // the command name may hold spaces: fields count from its end
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace gantry
