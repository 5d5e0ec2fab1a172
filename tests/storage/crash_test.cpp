// Crash safety: a child process writes bests and episodes and is killed with SIGKILL at random
// points; every best it was told is stored (put_if_better returned true) must survive, and the
// database must open cleanly. The child is this test binary itself, started again (fork + exec) on
// a hidden test case, so that it does not inherit the parent's RocksDB threads half-way.
#include "tests/support/temp_dir.hpp"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

#include "storage/store.hpp"

extern char** environ;

using namespace gantry;

namespace {

constexpr const char* kChildTest = "storage crash child";
constexpr const char* kDbVariable = "GANTRY_CRASH_TEST_DB";
constexpr int kAckFd = 3;
const Fingerprint kGraph{0x1234, 0x5678};
const Fingerprint kCluster{0x9abc, 0xdef0};
const std::string kJob = "crash-job";

using gantry::testing::TempDir;

void send_line(const std::string& line) {
  std::string text = line + "\n";
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(kAckFd, p, left);
    if (n <= 0) _exit(3);  // the parent is gone
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Starts this binary on the hidden child test with the ack pipe on fd 3; returns its pid.
pid_t spawn_child(const std::string& db, int ack_write_end) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, kDbVariable, std::strlen(kDbVariable)) != 0) env_strings.emplace_back(*e);
  env_strings.push_back(std::string(kDbVariable) + "=" + db);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string test_name = kChildTest;
  std::vector<char*> argv{self.data(), test_name.data(), nullptr};
  pid_t parent = getpid();

  pid_t pid = fork();
  if (pid != 0) return pid;
  // Child: only async-signal-safe calls until exec.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(126);
  if (ack_write_end == kAckFd)
    fcntl(kAckFd, F_SETFD, 0);
  else if (dup2(ack_write_end, kAckFd) < 0)
    _exit(126);
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) dup2(null, STDOUT_FILENO);
  execve(self.c_str(), argv.data(), envp.data());
  _exit(127);
}

// Reads what is available on `fd` within `timeout_ms`; false at end of file.
bool read_some(int fd, std::string& buffer, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  int ready = poll(&p, 1, timeout_ms);
  if (ready <= 0) return true;
  char chunk[4096];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n <= 0) return false;
  buffer.append(chunk, static_cast<std::size_t>(n));
  return true;
}

}  // namespace

// The child: loops writing episodes (unsynced) and ever better bests (synced), acknowledging each
// stored best as "makespan last_episode_sequence" on fd 3, until it is killed.
TEST_CASE(kChildTest, "[.][storage-crash-child]") {
  const char* db = std::getenv(kDbVariable);
  if (!db) return;  // only meaningful when started by the crash test
  auto opened = Store::open(db);
  if (!opened) {
    send_line("ERR " + opened.error().message);
    _exit(2);
  }
  auto& store = *opened.value();
  auto best = store.best(kGraph, kCluster);
  auto episodes = store.episodes(kJob);
  if (!best || !episodes) {
    send_line("ERR cannot read the store after reopening");
    _exit(2);
  }
  double makespan = best.value() ? best.value()->makespan : 1e9;
  std::uint64_t sequence = episodes.value().empty() ? 0 : episodes.value().back().sequence;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (long i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
    for (int k = 0; k < 4; ++k) {
      EpisodeRecord e;
      e.job_id = kJob;
      e.sequence = ++sequence;
      e.rollout = k;
      e.candidates = 32;
      e.best_makespan = makespan;
      e.mean_makespan = makespan * 1.5;
      if (!store.put_episode(e)) {
        send_line("ERR put_episode failed");
        _exit(2);
      }
    }
    if (i % 16 == 0 && !store.sync_wal()) {
      send_line("ERR sync_wal failed");
      _exit(2);
    }
    makespan -= 1 + static_cast<double>(i % 3) * 0.25;
    ScheduleRecord r;
    r.graph = kGraph;
    r.cluster = kCluster;
    r.method = "crash-test";
    r.job_id = kJob;
    r.makespan = makespan;
    r.placement.device.assign(256, static_cast<std::int32_t>(i % 8));
    r.evaluations = i;
    auto stored = store.put_if_better(r);
    if (!stored || !stored.value()) {
      send_line("ERR put_if_better did not store a better makespan");
      _exit(2);
    }
    char line[96];
    std::snprintf(line, sizeof line, "%.17g %llu", makespan, static_cast<unsigned long long>(sequence));
    send_line(line);
  }
  send_line("ERR the child was never killed");
  _exit(2);
}

TEST_CASE("acknowledged bests survive SIGKILL at random points", "[storage][slow]") {
  TempDir tmp;
  const std::string db = tmp.path() + "/db";
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> delay_ms(5, 50);
  constexpr int kRounds = 10;
  long total_acks = 0;

  for (int round = 0; round < kRounds; ++round) {
    INFO("round " << round);
    int fds[2];
    REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
    pid_t child = spawn_child(db, fds[1]);
    REQUIRE(child > 0);
    close(fds[1]);

    // Wait for the first acknowledgement, let the child run a little longer, then kill it.
    std::string output;
    bool open = true;
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (open && output.find('\n') == std::string::npos && std::chrono::steady_clock::now() < give_up)
      open = read_some(fds[0], output, 100);
    auto kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms(rng));
    while (open && std::chrono::steady_clock::now() < kill_at) open = read_some(fds[0], output, 1);
    kill(child, SIGKILL);
    while (open) open = read_some(fds[0], output, 1000);
    close(fds[0]);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    INFO("child output:\n" << output);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);

    // Every complete line is an acknowledgement (the last one may be cut off by the kill).
    std::istringstream lines(output);
    std::string line;
    double last_ack = 0;
    unsigned long long last_sequence = 0;
    int acks = 0;
    while (std::getline(lines, line)) {
      if (lines.eof()) break;  // no newline: not a complete acknowledgement
      REQUIRE(line.rfind("ERR", 0) != 0);
      double makespan = 0;
      unsigned long long sequence = 0;
      REQUIRE(std::sscanf(line.c_str(), "%lf %llu", &makespan, &sequence) == 2);
      if (acks > 0) CHECK(makespan < last_ack);
      last_ack = makespan;
      last_sequence = sequence;
      ++acks;
    }
    REQUIRE(acks > 0);
    total_acks += acks;

    auto opened = Store::open(db);
    REQUIRE(opened.ok());
    auto& store = *opened.value();
    auto best = store.best(kGraph, kCluster);
    REQUIRE(best.ok());
    REQUIRE(best.value().has_value());
    CHECK(best.value()->makespan <= last_ack);
    CHECK(best.value()->placement.size() == 256);
    auto history = store.history(kGraph, kCluster);
    REQUIRE(history.ok());
    REQUIRE_FALSE(history.value().empty());
    for (std::size_t i = 1; i < history.value().size(); ++i)
      CHECK(history.value()[i].makespan < history.value()[i - 1].makespan);
    CHECK(history.value().back().makespan == best.value()->makespan);
    // Episodes written before an acknowledged (synced) best are durable with it.
    auto episodes = store.episodes(kJob);
    REQUIRE(episodes.ok());
    REQUIRE_FALSE(episodes.value().empty());
    CHECK(episodes.value().back().sequence >= last_sequence);
    for (std::size_t i = 1; i < episodes.value().size(); ++i)
      CHECK(episodes.value()[i].sequence == episodes.value()[i - 1].sequence + 1);
    auto report = store.verify();
    REQUIRE(report.ok());
    CHECK(report.value().problems.empty());
  }
  CHECK(total_acks >= kRounds);
}
