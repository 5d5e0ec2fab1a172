// A damaged store (table files deleted, truncated or corrupted), jobs whose process is gone, and
// what a reader without permission is told.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstring>
#include <ctime>
#include <sys/stat.h>
#include <filesystem>
#include <fstream>

#include "core/host_name.hpp"
#include "core/unix_time.hpp"
#include "storage/store.hpp"
#include "tests/support/rocks_files.hpp"
#include "tests/support/temp_dir.hpp"

using namespace gantry;
using gantry::testing::TempDir;

namespace {

const Fingerprint kGraph{0x0123456789abcdefull, 0x1111111111111111ull};
const Fingerprint kCluster{0xaaaaaaaaaaaaaaaaull, 0xbbbbbbbbbbbbbbbbull};

ScheduleRecord record(double makespan) {
  ScheduleRecord r;
  r.graph = kGraph;
  r.cluster = kCluster;
  r.method = "search";
  r.makespan = makespan;
  r.placement.device = {0, 1};
  return r;
}

// A store whose best went 50 -> 40, each in its own table file: losing the newer file would
// silently bring back 50.
std::string two_generations(const TempDir& tmp) {
  const std::string db = tmp.file("db");
  {
    auto store = Store::open(db).value();
    REQUIRE(store->put_if_better(record(50)).value());
  }
  testing::flush_all(db);
  {
    auto store = Store::open(db).value();
    REQUIRE(store->put_if_better(record(40)).value());
  }
  testing::flush_all(db);
  REQUIRE(testing::table_files(db, "schedules").size() == 2);
  return db;
}

std::string host() { return host_name(); }

long dead_pid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

}  // namespace

TEST_CASE("unix_now is the system clock in seconds", "[storage]") {
  const double before = static_cast<double>(std::time(nullptr));
  const double now = unix_now();
  const double after = static_cast<double>(std::time(nullptr)) + 1;
  CHECK(now >= before);
  CHECK(now <= after);
}

TEST_CASE("a deleted or truncated table file makes queries fail and verify report it", "[storage]") {
  for (const bool truncate : {false, true}) {
    INFO((truncate ? "truncated" : "deleted"));
    TempDir tmp;
    const std::string db = two_generations(tmp);
    {  // healthy: the newer best
      auto reader = Store::open_read_only(db);
      REQUIRE(reader.ok());
      CHECK(reader.value()->best(kGraph, kCluster).value()->makespan == 40);
      CHECK(reader.value()->verify().value().problems.empty());
    }
    const std::string newest = testing::table_files(db, "schedules").front();
    const std::string name = std::filesystem::path(newest).stem().string();  // 000037 (.sst)
    if (truncate)
      std::filesystem::resize_file(newest, std::filesystem::file_size(newest) / 2);
    else
      std::filesystem::remove(newest);

    auto reader = Store::open_read_only(db);
    REQUIRE_FALSE(reader.ok());
    CHECK_THAT(reader.error().message, Catch::Contains("is damaged") && Catch::Contains(name));
    auto writer = Store::open(db);
    REQUIRE_FALSE(writer.ok());
    CHECK_THAT(writer.error().message, Catch::Contains("is damaged"));

    auto damaged = Store::open_read_only(db, /*allow_damaged=*/true);
    REQUIRE(damaged.ok());
    auto report = damaged.value()->verify();
    REQUIRE(report.ok());
    REQUIRE_FALSE(report.value().problems.empty());
    CHECK_THAT(report.value().problems.front(),
               Catch::Contains(name) && Catch::Contains(truncate ? "too short" : "No such file"));
  }
}

TEST_CASE("a corrupted table file makes reads and verify fail", "[storage]") {
  TempDir tmp;
  const std::string db = two_generations(tmp);
  const std::string newest = testing::table_files(db, "schedules").front();
  {  // flip bytes inside the first data block; the size stays
    std::fstream f(newest, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.write("\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
  }
  auto reader = Store::open_read_only(db);
  REQUIRE(reader.ok());  // sizes match: only reading finds it
  auto best = reader.value()->best(kGraph, kCluster);
  REQUIRE_FALSE(best.ok());
  CHECK_THAT(best.error().message, Catch::Contains("Corruption"));
  auto report = reader.value()->verify().value();
  REQUIRE_FALSE(report.problems.empty());
  CHECK_THAT(report.problems.front(), Catch::Contains("checksum"));
}

TEST_CASE("a RUNNING job whose process is gone is INTERRUPTED, once and for all", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  JobRecord gone, alive, elsewhere;
  gone.id = "gone";
  gone.owner_pid = dead_pid();
  gone.owner_host = host();
  alive.id = "alive";
  alive.owner_pid = getppid();  // the test runner's parent: alive, not us
  alive.owner_host = host();
  elsewhere.id = "elsewhere";
  elsewhere.owner_pid = gone.owner_pid;
  elsewhere.owner_host = host() + "-other";  // cannot be checked from here: stays RUNNING
  {
    auto store = Store::open(db).value();
    for (const auto& j : {gone, alive, elsewhere}) REQUIRE(store->put_job(j).ok());
  }
  auto state_of = [](Store& store, const std::string& id) { return store.job(id).value()->state; };
  {
    auto reader = Store::open_read_only(db).value();
    CHECK(state_of(*reader, "gone") == JobState::interrupted);
    CHECK(state_of(*reader, "alive") == JobState::running);
    CHECK(state_of(*reader, "elsewhere") == JobState::running);
    auto all = reader->jobs().value();
    REQUIRE(all.size() == 3);
    CHECK(std::count_if(all.begin(), all.end(), [](const JobRecord& j) { return j.state == JobState::interrupted; }) == 1);
    CHECK_THAT(reader->job("gone").value()->message, Catch::Contains(std::to_string(gone.owner_pid)));
  }
  Store::open(db).value().reset();  // the writer records it
  testing::with_raw_db(db, [&](rocksdb::DB& raw, std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
    std::string value;
    for (auto* h : handles)
      if (h->GetName() == "jobs") REQUIRE(raw.Get(rocksdb::ReadOptions(), h, "gone", &value).ok());
    CHECK(value.find("INTERRUPTED") != std::string::npos);
  });
  // A writer holds the lock, so no earlier process can still run a job here: even a job whose pid
  // now belongs to a live process (pid reuse, a container's pid 1) was interrupted.
  auto writer = Store::open(db).value();
  CHECK(state_of(*writer, "alive") == JobState::interrupted);
}

TEST_CASE("a reader given a file, not a folder, is told so (not \"permission denied\")", "[storage]") {
  TempDir tmp;
  const std::string file = tmp.file("afile");
  std::ofstream(file) << "x";
  for (const std::string& path : {file, std::string("/dev/null")}) {
    auto store = Store::open_read_only(path);
    REQUIRE_FALSE(store.ok());
    CHECK(store.error().message == "cannot read database " + path + ": it is a file, not a database folder");
  }
}

TEST_CASE("a reader without permission is told so, not that there is no database", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  Store::open(db).value().reset();
  // Root reads everything: the check runs as user nobody in a child process.
  REQUIRE(chmod(tmp.path().c_str(), 0755) == 0);
  REQUIRE(chmod(db.c_str(), 0700) == 0);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    if (geteuid() == 0 && setuid(65534) != 0) _exit(2);
    auto store = Store::open_read_only(db);
    const std::string message = store.ok() ? "opened" : store.error().message;
    (void)!write(fds[1], message.data(), message.size());
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK_THAT(message, Catch::Contains("permission denied") && Catch::Contains(db));
  CHECK_THAT(message, !Catch::Contains("no gantry database"));
}

TEST_CASE("injected sync failures fail sync_wal that many times, then it succeeds", "[storage]") {
  TempDir tmp;
  auto store = Store::open(tmp.file("db")).value();
  store->inject_faults({1, 1});
  CHECK_FALSE(store->sync_wal().ok());
  CHECK(store->sync_wal().ok());
  CHECK(store->wal_syncs() == 1);
  CHECK_FALSE(store->put_if_better(record(5)).ok());
  CHECK(store->put_if_better(record(5)).value());
}
