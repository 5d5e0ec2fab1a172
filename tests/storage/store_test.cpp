#include "core/host_name.hpp"
#include "tests/support/rocks_files.hpp"
#include "tests/support/temp_dir.hpp"
#include "storage/store.hpp"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "storage/codec.hpp"

using namespace gantry;

namespace {

using gantry::testing::TempDir;

ScheduleRecord make_record(const Fingerprint& graph, const Fingerprint& cluster, double makespan) {
  ScheduleRecord r;
  r.graph = graph;
  r.cluster = cluster;
  r.graph_label = "graphs/resnet.json";
  r.cluster_name = "4xP100-pcie";
  r.method = "search";
  r.sim = "default";
  r.unit = "us";
  r.makespan = makespan;
  r.lower_bound = 1.5;
  r.placement.device = {0, 1, 2, 3, 0};
  r.job_id = "job-1";
  r.evaluations = 42;
  return r;
}

// Writes one raw value into a closed database, bypassing the store (to fake other versions or damage).
void raw_put(const std::string& path, const std::string& family, const std::string& key, const std::string& value) {
  rocksdb::Options options;
  std::vector<std::string> names;
  REQUIRE(rocksdb::DB::ListColumnFamilies(options, path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  REQUIRE(rocksdb::DB::Open(options, path, descriptors, &handles, &db).ok());
  bool found = false;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == family) {
      rocksdb::WriteOptions wo;
      wo.sync = true;
      CHECK(db->Put(wo, handles[i], key, value).ok());
      found = true;
    }
  for (auto* h : handles) CHECK(db->DestroyColumnFamilyHandle(h).ok());
  CHECK(db->Close().ok());
  delete db;
  REQUIRE(found);
}

// Tries Store::open in a forked child; returns its error message ("opened" if it opened).
std::string open_in_child(const std::string& db) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    auto second = Store::open(db);
    std::string message = second.ok() ? "opened" : second.error().message;
    ssize_t written = write(fds[1], message.data(), message.size());
    _exit(written == static_cast<ssize_t>(message.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string message;
  char buffer[512];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) message.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  return message;
}

// Whether, seen from another process, the database's LOCK file is held (by this process).
bool lock_held(const std::string& db) {
  pid_t parent = getpid();
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int fd = open((db + "/LOCK").c_str(), O_RDONLY);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    bool held = fd >= 0 && fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK && fl.l_pid == parent;
    _exit(held ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

const Fingerprint kGraph{0x0123456789abcdefull, 0x1111111111111111ull};
const Fingerprint kOtherGraph{0xfedcba9876543210ull, 0x2222222222222222ull};
const Fingerprint kCluster{0xaaaaaaaaaaaaaaaaull, 0xbbbbbbbbbbbbbbbbull};

}  // namespace

TEST_CASE("job states print and parse", "[storage]") {
  CHECK(std::string(to_string(JobState::running)) == "RUNNING");
  CHECK(std::string(to_string(JobState::complete)) == "COMPLETE");
  CHECK(std::string(to_string(JobState::failed)) == "FAILED");
  CHECK(std::string(to_string(JobState::cancelled)) == "CANCELLED");
  CHECK(parse_job_state("cancelled") == JobState::cancelled);
  CHECK(parse_job_state("FAILED") == JobState::failed);
  CHECK_FALSE(parse_job_state("done").has_value());
}

TEST_CASE("the data directory comes from GANTRY_DATA, else ./gantry-data", "[storage]") {
  const char* saved = std::getenv("GANTRY_DATA");
  std::string saved_value = saved ? saved : "";
  setenv("GANTRY_DATA", "/somewhere/else", 1);
  CHECK(default_data_dir() == "/somewhere/else");
  unsetenv("GANTRY_DATA");
  CHECK(default_data_dir() == "./gantry-data");
  if (saved) setenv("GANTRY_DATA", saved_value.c_str(), 1);
}

TEST_CASE("codec keys are big-endian and values round-trip", "[storage]") {
  Fingerprint fp{0x0102030405060708ull, 0x090a0b0c0d0e0f10ull};
  std::string key = codec::fingerprint_key(fp);
  REQUIRE(key.size() == 16);
  CHECK(static_cast<unsigned char>(key[0]) == 0x01);
  CHECK(static_cast<unsigned char>(key[15]) == 0x10);
  CHECK(codec::parse_fingerprint_key(key).value() == fp);
  CHECK(codec::parse_fingerprint_hex(fp.hex()).value() == fp);

  // Bytewise order of history keys is time order, then sequence order.
  codec::HistoryKey a{kGraph, kCluster, 255, 7}, b{kGraph, kCluster, 256, 0}, c{kGraph, kCluster, 256, 1};
  CHECK(codec::history_key(a) < codec::history_key(b));
  CHECK(codec::history_key(b) < codec::history_key(c));
  auto parsed = codec::parse_history_key(codec::history_key(c)).value();
  CHECK(parsed.micros == 256);
  CHECK(parsed.sequence == 1);
  CHECK(parsed.cluster == kCluster);
  CHECK(codec::episode_key("j", 1) < codec::episode_key("j", 256));
  CHECK(codec::parse_episode_key(codec::episode_key("job-7", 99)).value() ==
        std::make_pair(std::string("job-7"), std::uint64_t{99}));

  ScheduleRecord r = make_record(kGraph, kCluster, 12.25);
  r.placement.priority = {0.5, 1, 2, 3, 4};
  r.found_at = 1700000000.123456;
  auto back = codec::decode_schedule(codec::encode(r)).value();
  CHECK(back.graph == r.graph);
  CHECK(back.cluster == r.cluster);
  CHECK(back.makespan == r.makespan);
  CHECK(back.placement.device == r.placement.device);
  CHECK(back.placement.priority == r.placement.priority);
  CHECK(back.found_at == r.found_at);
  CHECK(back.evaluations == 42);

  // Bad bytes and newer versions are errors, never exceptions.
  CHECK_FALSE(codec::decode_schedule("garbage"));
  CHECK_FALSE(codec::decode_schedule(""));
  CHECK_FALSE(codec::decode_job(codec::encode(r)));     // a schedule is not a job
  std::string newer = codec::encode_schema_version(3);  // {"v": 3}
  auto err = codec::decode_history(newer);
  REQUIRE_FALSE(err);
  CHECK_THAT(err.error().message, Catch::Contains("schema version 3, this gantry reads up to 2"));

  // A job's kind round-trips; a record written before kinds existed is a tuning job.
  JobRecord job;
  job.id = "job-1";
  job.kind = "pipeline";
  job.state = JobState::complete;
  CHECK(codec::decode_job(codec::encode(job)).value().kind == "pipeline");
  job.submit_key = "k-1";  // a client's submit key round-trips; none is written as none
  CHECK(codec::decode_job(codec::encode(job)).value().submit_key == "k-1");
  job.submit_key.clear();
  CHECK(nlohmann::json::from_msgpack(codec::encode(job)).count("submit_key") == 0);
  job.improves = "job-0";  // a background run's source round-trips; other jobs write none
  CHECK(codec::decode_job(codec::encode(job)).value().improves == "job-0");
  job.improves.clear();
  CHECK(nlohmann::json::from_msgpack(codec::encode(job)).count("improves") == 0);
  JobRecord old = job;
  old.kind = "ignored";
  nlohmann::json written = nlohmann::json::from_msgpack(codec::encode(old));
  written.erase("kind");
  const std::string old_record = written.dump();
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_msgpack(nlohmann::json::parse(old_record));
  auto legacy = codec::decode_job(std::string(bytes.begin(), bytes.end()));
  INFO((legacy ? std::string() : legacy.error().message));
  REQUIRE(legacy);
  CHECK(legacy.value().kind == "tune");
}

TEST_CASE("a reopened store keeps all its data", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  {
    auto opened = Store::open(db);
    REQUIRE(opened.ok());
    auto& store = *opened.value();
    CHECK_FALSE(store.read_only());
    CHECK(store.path() == db);
    CHECK(std::filesystem::exists(db + "/OWNER"));
    REQUIRE(store.put_graph(kGraph, R"({"ops": []})").ok());
    REQUIRE(store.put_cluster(kCluster, "4xP100-pcie").ok());
    ScheduleRecord r = make_record(kGraph, kCluster, 10);
    r.placement.priority = {5, 4, 3, 2, 1};
    REQUIRE(store.put_if_better(r).value());
    REQUIRE(store.put_if_better(make_record(kOtherGraph, kCluster, 20)).value());
    JobRecord job;
    job.id = "job-1";
    job.state = JobState::complete;
    job.graph = kGraph;
    job.cluster = kCluster;
    job.started = 100;
    job.finished = 200;
    job.best_makespan = 10;
    job.message = "done";
    REQUIRE(store.put_job(job).ok());
    for (std::uint64_t seq : {300u, 2u, 1u}) {  // out of order: read back in sequence order
      EpisodeRecord e;
      e.job_id = "job-1";
      e.sequence = seq;
      e.candidates = 64;
      e.best_makespan = 10.0 + seq;
      REQUIRE(store.put_episode(e).ok());
    }
    EpisodeRecord other;
    other.job_id = "job-10";  // shares the prefix "job-1" but is another job
    other.sequence = 1;
    REQUIRE(store.put_episode(other).ok());
    REQUIRE(store.sync_wal().ok());
  }
  CHECK_FALSE(std::filesystem::exists(db + "/OWNER"));  // removed on a clean close

  auto opened = Store::open(db);
  REQUIRE(opened.ok());
  auto& store = *opened.value();
  CHECK(store.graph(kGraph).value().value() == R"({"ops": []})");
  CHECK(store.cluster(kCluster).value().value() == "4xP100-pcie");
  CHECK_FALSE(store.graph(kOtherGraph).value().has_value());
  auto best = store.best(kGraph, kCluster).value();
  REQUIRE(best.has_value());
  CHECK(best->makespan == 10);
  CHECK(best->placement.priority == std::vector<double>{5, 4, 3, 2, 1});
  CHECK(best->found_at > 0);  // filled in when the caller left it 0
  CHECK(store.list_best().value().size() == 2);
  CHECK(store.list_best("0123").value().size() == 1);
  CHECK(store.list_best("0123456789ABCDEF1").value().size() == 1);  // odd length, upper case
  CHECK(store.list_best("fedc").value().at(0).graph == kOtherGraph);
  CHECK(store.list_best("99").value().empty());
  CHECK_FALSE(store.list_best("xyz").ok());
  auto job = store.job("job-1").value();
  REQUIRE(job.has_value());
  CHECK(job->state == JobState::complete);
  CHECK(job->graph == kGraph);
  CHECK(job->message == "done");
  CHECK_FALSE(store.job("job-2").value().has_value());
  CHECK(store.jobs().value().size() == 1);
  auto episodes = store.episodes("job-1").value();
  REQUIRE(episodes.size() == 3);
  CHECK(episodes[0].sequence == 1);
  CHECK(episodes[1].sequence == 2);
  CHECK(episodes[2].sequence == 300);
  CHECK(episodes[2].best_makespan == 310);
  CHECK(store.episodes("job-10").value().size() == 1);
  CHECK(store.episodes("nobody").value().empty());
}

TEST_CASE("episodes written together land together, or not at all", "[storage]") {
  TempDir tmp;
  auto opened = Store::open(tmp.file("db"));
  REQUIRE(opened.ok());
  Store& store = *opened.value();
  std::vector<EpisodeRecord> episodes;
  for (std::uint64_t seq = 1; seq <= 50; ++seq) episodes.push_back(EpisodeRecord{"job-2", seq, 0, 3, 1.0, 2.0, 0});
  REQUIRE(store.put_episodes(episodes).ok());
  CHECK(store.episodes("job-2").value().size() == 50);
  // One bad record refuses the whole write: the ones before it are not written either.
  std::vector<EpisodeRecord> damaged{EpisodeRecord{"job-3", 1, 0, 3, 1.0, 2.0, 0}, EpisodeRecord{"", 2, 0, 3, 1.0, 2.0, 0}};
  auto refused = store.put_episodes(damaged);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("job id is empty"));
  CHECK(store.episodes("job-3").value().empty());
}

TEST_CASE("a database written by a newer schema is refused", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  REQUIRE(Store::open(db).ok());  // creates it, closes it
  raw_put(db, "meta", "schema_version", codec::encode_schema_version(3));
  auto opened = Store::open(db);
  REQUIRE_FALSE(opened.ok());
  CHECK_THAT(opened.error().message,
             Catch::Contains("written by schema version 3, this gantry reads up to 2; upgrade gantry"));
  auto read_only = Store::open_read_only(db);
  REQUIRE_FALSE(read_only.ok());
  CHECK_THAT(read_only.error().message, Catch::Contains("upgrade gantry"));
  CHECK_FALSE(std::filesystem::exists(db + "/OWNER"));
}

TEST_CASE("a pipeline best keeps its scheme and candidate; placements read back without them", "[storage]") {
  TempDir tmp;
  auto store = Store::open(tmp.file("db")).value();
  ScheduleRecord scheme = make_record(kGraph, kCluster, 2.5);
  scheme.placement = Placement{};
  scheme.scheme = R"({"format":"gantry-pipeline-scheme","microbatches":4})";
  scheme.candidate = R"({"placement":[0,1,0,1]})";
  REQUIRE(store->put_if_better(scheme).value());
  REQUIRE(store->put_if_better(make_record(kOtherGraph, kCluster, 3)).value());
  auto back = store->best(kGraph, kCluster).value();
  REQUIRE(back.has_value());
  CHECK(back->is_pipeline());
  CHECK(back->scheme == scheme.scheme);
  CHECK(back->candidate == scheme.candidate);
  auto placement = store->best(kOtherGraph, kCluster).value();
  REQUIRE(placement.has_value());
  CHECK_FALSE(placement->is_pipeline());
}

TEST_CASE("put_if_better keeps the better result and records each improvement", "[storage]") {
  TempDir tmp;
  auto store = Store::open(tmp.file("db")).value();
  CHECK_FALSE(store->best(kGraph, kCluster).value().has_value());
  CHECK(store->history(kGraph, kCluster).value().empty());

  CHECK(store->put_if_better(make_record(kGraph, kCluster, 100)).value());
  CHECK_FALSE(store->put_if_better(make_record(kGraph, kCluster, 120)).value());  // worse
  CHECK_FALSE(store->put_if_better(make_record(kGraph, kCluster, 100)).value());  // equal
  auto better = make_record(kGraph, kCluster, 80);
  better.method = "heft";
  better.found_at = 1.0;  // earlier than the first entry's time: history stays in commit order
  CHECK(store->put_if_better(better).value());
  CHECK_FALSE(store->put_if_better(make_record(kGraph, kCluster, 90)).value());
  CHECK_FALSE(store->put_if_better(make_record(kGraph, kCluster, NAN)).ok());

  auto best = store->best(kGraph, kCluster).value();
  REQUIRE(best.has_value());
  CHECK(best->makespan == 80);
  CHECK(best->method == "heft");
  auto history = store->history(kGraph, kCluster).value();
  REQUIRE(history.size() == 2);
  CHECK(history[0].makespan == 100);
  CHECK(history[1].makespan == 80);
  CHECK(history[1].method == "heft");
  CHECK(history[1].time == 1.0);
  // Another cluster is another best.
  CHECK(store->put_if_better(make_record(kGraph, kGraph, 500)).value());
  CHECK(store->best(kGraph, kCluster).value()->makespan == 80);
  CHECK(store->history(kGraph, kCluster).value().size() == 2);
}

TEST_CASE("concurrent put_if_better never lets a worse result win", "[storage]") {
  TempDir tmp;
  auto store = Store::open(tmp.file("db")).value();
  constexpr int kThreads = 8, kPerThread = 200;
  std::vector<double> minima(kThreads, INFINITY);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      std::uniform_real_distribution<double> makespan(1.0, 1000.0);
      for (int i = 0; i < kPerThread; ++i) {
        auto r = make_record(kGraph, kCluster, makespan(rng));
        r.job_id = "thread-" + std::to_string(t);
        r.found_at = 1000.0 + i * 1e-7;  // same-microsecond and out-of-order times across threads
        minima[t] = std::min(minima[t], r.makespan);
        if (!store->put_if_better(r).ok()) ++errors;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  double global = *std::min_element(minima.begin(), minima.end());
  auto best = store->best(kGraph, kCluster).value();
  REQUIRE(best.has_value());
  CHECK(best->makespan == global);
  auto history = store->history(kGraph, kCluster).value();
  REQUIRE_FALSE(history.empty());
  for (std::size_t i = 1; i < history.size(); ++i) CHECK(history[i].makespan < history[i - 1].makespan);
  CHECK(history.back().makespan == global);
}

TEST_CASE("a second writer is told which process holds the database", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  const std::string expected =
      "database " + db + " in use by PID " + std::to_string(getpid()) + " on host " + host_name();
  auto first = Store::open(db);
  REQUIRE(first.ok());
  CHECK(lock_held(db));

  SECTION("in the same process") {
    auto second = Store::open(db);
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().message == expected);
    for (const std::string& spelling :
         {db + "/.", db + "/", tmp.path() + "/../" + std::filesystem::path(tmp.path()).filename().string() + "/db"}) {
      auto third = Store::open(spelling);  // another spelling of the same path
      REQUIRE_FALSE(third.ok());
      CHECK_THAT(third.error().message, Catch::Contains("in use by PID " + std::to_string(getpid())));
    }
    // The failed opens did not disturb the first one, nor release its lock.
    CHECK(first.value()->put_if_better(make_record(kGraph, kCluster, 5)).value());
    CHECK(lock_held(db));
    CHECK(open_in_child(db) == expected);
  }
  SECTION("in a forked child") {
    CHECK(open_in_child(db) == expected);
    CHECK(first.value()->put_if_better(make_record(kGraph, kCluster, 5)).value());
  }
  CHECK(lock_held(db));
  first.value().reset();  // closes the store
  CHECK_FALSE(lock_held(db));
  CHECK(Store::open(db).ok());
}

TEST_CASE("a read-only secondary sees the primary's writes and refuses its own", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  CHECK_FALSE(Store::open_read_only(tmp.file("missing")).ok());

  auto primary = Store::open(db).value();
  REQUIRE(primary->put_if_better(make_record(kGraph, kCluster, 50)).value());
  auto opened = Store::open_read_only(db);
  REQUIRE(opened.ok());
  auto& reader = *opened.value();
  CHECK(reader.read_only());
  CHECK(reader.best(kGraph, kCluster).value()->makespan == 50);

  REQUIRE(primary->put_if_better(make_record(kGraph, kCluster, 40)).value());
  JobRecord job;
  job.id = "job-9";
  REQUIRE(primary->put_job(job).ok());
  REQUIRE(reader.catch_up().ok());
  CHECK(reader.best(kGraph, kCluster).value()->makespan == 40);
  CHECK(reader.history(kGraph, kCluster).value().size() == 2);
  CHECK(reader.job("job-9").value().has_value());

  auto write = reader.put_if_better(make_record(kGraph, kCluster, 1));
  REQUIRE_FALSE(write.ok());
  CHECK_THAT(write.error().message, Catch::Contains("read-only"));
  CHECK_THAT(reader.put_job(job).error().message, Catch::Contains("read-only"));
  CHECK_THAT(reader.put_episode(EpisodeRecord{"job-9", 1, 0, 0, 0, 0, 0}).error().message,
             Catch::Contains("read-only"));
  CHECK_THAT(reader.put_graph(kGraph, "{}").error().message, Catch::Contains("read-only"));
  CHECK_THAT(reader.put_cluster(kCluster, "x").error().message, Catch::Contains("read-only"));
  CHECK(reader.verify().value().problems.empty());
  // A backup needs no writer's lock: the primary stays open (and writable) the whole time.
  REQUIRE(reader.backup(tmp.file("backup")).ok());
  CHECK_FALSE(reader.backup(tmp.file("backup")).ok());  // never overwrites
  CHECK(reader.stats().value().families.size() == 11);
  REQUIRE(primary->put_if_better(make_record(kGraph, kCluster, 35)).value());
  CHECK(primary->best(kGraph, kCluster).value()->makespan == 35);
  auto copy = Store::open(tmp.file("backup"));
  REQUIRE(copy.ok());
  CHECK(copy.value()->best(kGraph, kCluster).value()->makespan == 40);  // as of the backup
  CHECK(copy.value()->history(kGraph, kCluster).value().size() == 2);
  CHECK(copy.value()->job("job-9").value().has_value());
  CHECK(copy.value()->verify().value().problems.empty());
}

TEST_CASE("a backup is a database with the same bests", "[storage]") {
  TempDir tmp;
  auto store = Store::open(tmp.file("db")).value();
  REQUIRE(store->put_if_better(make_record(kGraph, kCluster, 30)).value());
  REQUIRE(store->put_if_better(make_record(kOtherGraph, kCluster, 31)).value());
  REQUIRE(store->put_graph(kGraph, "{}").ok());
  REQUIRE(store->backup(tmp.file("backup")).ok());
  CHECK_FALSE(store->backup(tmp.file("backup")).ok());                        // never overwrites
  REQUIRE(store->put_if_better(make_record(kGraph, kCluster, 20)).value());  // after the backup

  auto copy = Store::open(tmp.file("backup"));
  REQUIRE(copy.ok());
  auto bests = copy.value()->list_best().value();
  REQUIRE(bests.size() == 2);
  CHECK(copy.value()->best(kGraph, kCluster).value()->makespan == 30);
  CHECK(copy.value()->best(kOtherGraph, kCluster).value()->makespan == 31);
  CHECK(copy.value()->graph(kGraph).value().has_value());
  CHECK(copy.value()->verify().value().problems.empty());
}

TEST_CASE("verify is clean on a healthy store and names damaged values", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  {
    auto store = Store::open(db).value();
    REQUIRE(store->put_if_better(make_record(kGraph, kCluster, 30)).value());
    REQUIRE(store->put_episode(EpisodeRecord{"job-1", 1, 0, 10, 30, 40, 0}).ok());
    JobRecord job;
    job.id = "job-1";
    REQUIRE(store->put_job(job).ok());
    auto report = store->verify().value();
    CHECK(report.problems.empty());
    CHECK(report.records == 5);  // schema version, best, history, episode, job
  }
  raw_put(db, "schedules", codec::schedule_key(kOtherGraph, kCluster), "\xc1 not msgpack");
  raw_put(db, "history", codec::history_key({kGraph, kCluster, 1, 0}), codec::encode_schema_version(3));
  auto store = Store::open(db).value();
  auto report = store->verify().value();
  REQUIRE(report.problems.size() == 2);
  CHECK_THAT(report.problems[0], Catch::Contains("schedules key " + kOtherGraph.hex() + kCluster.hex()));
  CHECK_THAT(report.problems[0], Catch::Contains("not valid MessagePack"));
  CHECK_THAT(report.problems[1], Catch::StartsWith("history key"));
  CHECK_THAT(report.problems[1], Catch::Contains("schema version 3"));
  CHECK_FALSE(store->best(kOtherGraph, kCluster).ok());
  CHECK_FALSE(store->put_if_better(make_record(kOtherGraph, kCluster, 1)).ok());  // never overwrites blindly
  CHECK_FALSE(store->list_best().ok());
  CHECK(store->best(kGraph, kCluster).value()->makespan == 30);
}

TEST_CASE("stats list all eleven column families", "[storage]") {
  TempDir tmp;
  auto store = Store::open(tmp.file("db")).value();
  REQUIRE(store->put_if_better(make_record(kGraph, kCluster, 30)).value());
  auto stats = store->stats().value();
  CHECK(stats.schema_version == 2);  // 2: job specs apart from job records
  CHECK(stats.path == tmp.file("db"));
  std::vector<std::string> names;
  for (const auto& f : stats.families) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"meta", "graphs", "clusters", "profiles", "episodes", "schedules", "history",
                                          "policies", "jobs", "checkpoints", "job_specs"});
  for (const auto& f : stats.families) {
    INFO(f.name);
    if (f.name == "schedules" || f.name == "history" || f.name == "meta") {
      CHECK(f.keys == 1);
      CHECK(f.bytes > 0);
    }
    if (f.name == "jobs") CHECK(f.keys == 0);
  }
}

namespace {

// `n` letters that do not compress: table files keep the size of what they hold.
std::string incompressible_text(std::size_t n) {
  std::string text(n, ' ');
  std::mt19937 letters(7);
  for (char& ch : text) ch = static_cast<char>('a' + letters() % 26);
  return text;
}

}  // namespace

TEST_CASE("a job's spec is kept apart from its record: listings leave it out, a later put keeps it", "[storage]") {
  TempDir tmp;
  const std::string spec = incompressible_text(3 << 20);  // a large graph's content
  JobRecord job;
  job.id = "job-big";
  job.state = JobState::queued;
  job.spec = spec;
  {
    auto store = Store::open(tmp.file("db")).value();
    REQUIRE(store->put_job(job).ok());
    const std::vector<JobRecord> listed = store->jobs().value(), whole = store->jobs(true).value();
    REQUIRE(listed.size() == 1);
    REQUIRE(whole.size() == 1);
    CHECK(listed[0].spec.empty());
    CHECK(whole[0].spec.size() == spec.size());
    CHECK((whole[0].spec == spec));
    JobRecord done = job;  // the record's later states come without the spec
    done.spec.clear();
    done.state = JobState::complete;
    REQUIRE(store->put_job(done).ok());
    auto read = store->job("job-big").value();
    REQUIRE(read.has_value());
    CHECK(read->state == JobState::complete);
    CHECK(read->spec.size() == spec.size());
    CHECK((read->spec == spec));
  }
  // A listing's cost does not grow with the specs: the jobs family holds the records only.
  auto store = Store::open(tmp.file("db")).value();
  const StoreStats stats = store->stats().value();
  for (const auto& f : stats.families) {
    INFO(f.name);
    if (f.name == "jobs") CHECK(f.bytes < 100000);
    if (f.name == "job_specs") CHECK(f.keys == 1);
  }
  CHECK(store->verify().value().problems.empty());
}

TEST_CASE("dropping a job removes its record, spec, batch summaries and checkpoint, and nothing of another job", "[storage]") {
  TempDir tmp;
  auto store = Store::open(tmp.file("db")).value();
  for (const std::string id : {"job-1", "job-10"}) {  // one id a prefix of the other
    JobRecord job;
    job.id = id;
    job.state = JobState::complete;
    job.spec = "{\"kind\":\"tune\"}";
    REQUIRE(store->put_job(job).ok());
    REQUIRE(store->put_episodes({EpisodeRecord{id, 1, 0, 3, 1.0, 2.0, 0}, EpisodeRecord{id, 2, 0, 3, 1.0, 2.0, 0}}).ok());
    REQUIRE(store->put_checkpoint(id, "bytes").ok());
  }
  REQUIRE(store->drop_job("job-1").ok());
  CHECK_FALSE(store->job("job-1").value().has_value());
  CHECK(store->episodes("job-1").value().empty());
  CHECK_FALSE(store->checkpoint("job-1").value().has_value());
  const auto kept = store->job("job-10").value();
  REQUIRE(kept.has_value());
  CHECK(kept->spec == "{\"kind\":\"tune\"}");
  CHECK(store->episodes("job-10").value().size() == 2);
  CHECK(store->checkpoint("job-10").value().has_value());
  CHECK(store->jobs().value().size() == 1);
  CHECK(store->verify().value().problems.empty());
  CHECK(store->drop_job("no-such-job").ok());  // nothing to drop is no error
}

TEST_CASE("a record written with its spec inside (before specs were kept apart) reads back whole and moves it", "[storage]") {
  TempDir tmp;
  JobRecord job;
  job.id = "job-old";
  job.state = JobState::complete;
  { REQUIRE(Store::open(tmp.file("db")).value()->put_job(job).ok()); }
  // The old layout, written under the store: the record's map with "spec" in it.
  nlohmann::json old = nlohmann::json::from_msgpack(codec::encode(job));
  const std::string spec = "{\"kind\": \"tune\", \"graph\": \"" + incompressible_text(3 << 20) + "\"}";
  old["spec"] = spec;
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_msgpack(old);
  gantry::testing::with_raw_db(tmp.file("db"), [&](rocksdb::DB& db, std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
    for (auto* h : handles) {
      if (h->GetName() == "jobs")
        REQUIRE(db.Put(rocksdb::WriteOptions(), h, "job-old", std::string(bytes.begin(), bytes.end())).ok());
      if (h->GetName() == "meta")  // a database of schema 1
        REQUIRE(db.Put(rocksdb::WriteOptions(), h, codec::kSchemaVersionKey, codec::encode_schema_version(1)).ok());
    }
  });
  auto store = Store::open(tmp.file("db")).value();
  const auto read = store->job("job-old").value();
  REQUIRE(read.has_value());
  CHECK((read->spec == spec));
  const std::vector<JobRecord> listed = store->jobs().value();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].spec.empty());
  const StoreStats stats = store->stats().value();
  CHECK(stats.schema_version == 2);
  for (const auto& f : stats.families) {
    INFO(f.name);
    if (f.name == "job_specs") CHECK(f.keys == 1);  // moved when the store was opened
    if (f.name == "jobs") CHECK(f.bytes < (1 << 20));  // and the record's old version compacted away
  }
}

TEST_CASE("a job's checkpoint is replaced by the next, survives a reopen, is verified and dropped", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  const std::string bytes("\x00\xff learner state", 16);  // opaque bytes, zeros included
  {
    auto store = Store::open(db).value();
    for (const char* id : {"job-1", "job-2"}) {  // running: their checkpoints outlive a reopen
      JobRecord job;
      job.id = id;
      REQUIRE(store->put_job(job).ok());
    }
    CHECK_FALSE(store->checkpoint("job-1").value());
    REQUIRE(store->put_checkpoint("job-1", "first").ok());
    REQUIRE(store->put_checkpoint("job-1", bytes).ok());
    REQUIRE(store->put_checkpoint("job-2", "other").ok());
    CHECK_FALSE(store->put_checkpoint("", "x").ok());
  }
  auto store = Store::open(db).value();
  CHECK(*store->checkpoint("job-1").value() == bytes);
  CHECK(*store->checkpoint("job-2").value() == "other");
  auto report = store->verify().value();
  CHECK(report.problems.empty());
  CHECK(report.records == 5);  // schema version, two jobs and their checkpoints
  REQUIRE(store->drop_checkpoint("job-1").ok());
  CHECK_FALSE(store->checkpoint("job-1").value());
  CHECK(*store->checkpoint("job-2").value() == "other");
  store.reset();
  raw_put(db, "checkpoints", "job-2", codec::encode_schema_version(1));  // a value without its data
  auto damaged = Store::open(db).value();
  auto verified = damaged->verify().value();
  REQUIRE(verified.problems.size() == 1);
  CHECK_THAT(verified.problems[0], Catch::Contains("checkpoints key 'job-2'"));
  CHECK_FALSE(damaged->checkpoint("job-2").ok());
}

TEST_CASE("opening a store drops the checkpoints of jobs that ended or are not recorded", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  {
    auto store = Store::open(db).value();
    for (const auto& [id, state] : {std::pair<const char*, JobState>{"done", JobState::complete},
                                    {"failed", JobState::failed},
                                    {"cancelled", JobState::cancelled},
                                    {"interrupted", JobState::interrupted}}) {
      JobRecord job;
      job.id = id;
      job.state = state;
      REQUIRE(store->put_job(job).ok());
      REQUIRE(store->put_checkpoint(id, "state").ok());
    }
    REQUIRE(store->put_checkpoint("unrecorded", "state").ok());
  }
  auto store = Store::open(db).value();
  for (const char* ended : {"done", "failed", "cancelled", "unrecorded"}) {
    INFO(ended);
    CHECK_FALSE(store->checkpoint(ended).value());
  }
  CHECK(store->checkpoint("interrupted").value());  // a restarted coordinator reruns it
}

TEST_CASE("policies get successive versions per name and keep their bytes across a reopen", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  std::string weights(70000, '\0');
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<char>(i * 31 % 256);  // every byte value
  {
    auto store = Store::open(db);
    REQUIRE(store.ok());
    PolicyRecord p;
    p.name = "ffnn";
    p.weights = weights;
    p.stage = "il";
    p.episodes = 640;
    p.job = "job-a";
    p.curve = "episodes,seconds\n8,0.5\n";
    p.created = 100;
    CHECK(store.value()->put_policy(p).value().version == 1);
    p.stage = "sim";
    p.weights = weights.substr(1);
    p.job = "job-b";
    p.curve = "the second run's curve";
    CHECK(store.value()->put_policy(p).value().version == 2);
    p.name = "other";
    p.job = "job-a";  // a job that stored twice: the later one is its policy
    p.created = 200;
    CHECK(store.value()->put_policy(p).value().version == 1);
    for (const char* bad : {"bad:name", "a/b", "x.policy", "builtin", ""}) {  // would read as a version, file or the shipped one
      p.name = bad;
      CHECK_FALSE(store.value()->put_policy(p).ok());
    }
  }
  auto store = Store::open_read_only(db);
  REQUIRE(store.ok());
  auto newest = store.value()->policy("ffnn");
  REQUIRE(newest.ok());
  REQUIRE(newest.value().has_value());
  CHECK(newest.value()->version == 2);
  CHECK(newest.value()->stage == "sim");
  CHECK(newest.value()->weights == weights.substr(1));
  auto first = store.value()->policy("ffnn", 1);
  REQUIRE(first.value().has_value());
  CHECK(first.value()->weights == weights);
  CHECK(first.value()->episodes == 640);
  CHECK(first.value()->job == "job-a");
  CHECK(first.value()->curve == "episodes,seconds\n8,0.5\n");
  // By the job that stored it, in full.
  auto of_b = store.value()->policy_of_job("job-b");
  REQUIRE(of_b.value().has_value());
  CHECK((of_b.value()->name == "ffnn" && of_b.value()->version == 2 && of_b.value()->weights == weights.substr(1) &&
         of_b.value()->curve == "the second run's curve"));
  auto of_a = store.value()->policy_of_job("job-a");
  REQUIRE(of_a.value().has_value());
  CHECK((of_a.value()->name == "other" && of_a.value()->version == 1));
  CHECK_FALSE(store.value()->policy_of_job("job-c").value().has_value());
  CHECK_FALSE(store.value()->policy_of_job("").value().has_value());
  CHECK_FALSE(store.value()->policy("ffnn", 3).value().has_value());
  CHECK_FALSE(store.value()->policy("ff").value().has_value());  // a prefix of a name is not the name
  auto all = store.value()->policies();
  REQUIRE(all.ok());
  REQUIRE(all.value().size() == 3);
  CHECK(all.value()[0].name == "ffnn");
  CHECK(all.value()[0].weights.empty());  // listings leave the weights and curves out
  CHECK(all.value()[0].curve.empty());
  CHECK(all.value()[0].job == "job-a");
  CHECK(all.value()[2].name == "other");
  auto report = store.value()->verify();
  REQUIRE(report.ok());
  CHECK(report.value().problems.empty());
}

TEST_CASE("profiles merge their running statistics across writes and survive a reopen", "[storage]") {
  TempDir tmp;
  const std::string db = tmp.file("db");
  const OpSignature mm{"matmul/f32", "matmul/f32/out=[8,8]", 1024, {}};
  {
    auto opened = Store::open(db);
    REQUIRE(opened.ok());
    ProfileTable first, second;
    first.add("CPU", mm, 1.0);
    first.add("CPU", mm, 3.0);
    second.add("CPU", mm, 5.0);
    second.add("CPU->CPU", transfer_signature(64), 0.5);
    REQUIRE(opened.value()->add_profiles(first).ok());
    REQUIRE(opened.value()->add_profiles(second).ok());
  }
  auto reopened = Store::open(db);
  REQUIRE(reopened.ok());
  auto table = reopened.value()->profiles();
  REQUIRE(table.ok());
  REQUIRE(table.value().size() == 2);
  CHECK(*table.value().op_time("CPU", mm) == Approx(3.0));  // (1 + 3 + 5) / 3
  for (const ProfileEntry& e : table.value().entries())
    if (e.device_kind == "CPU") {
      CHECK(e.seconds.count == 3);
      CHECK(e.seconds.variance() == Approx(4.0));  // samples 1, 3, 5
      CHECK(e.op.work == 1024);
    }
  CHECK(reopened.value()->verify().value().problems.empty());
}

TEST_CASE("a measurement is recorded with the best only while the best has its placement", "[storage]") {
  TempDir tmp;
  auto opened = Store::open(tmp.file("db"));
  REQUIRE(opened.ok());
  Store& store = *opened.value();
  ScheduleRecord r = make_record(kGraph, kCluster, 10);
  Placement other = r.placement;
  other.device[0] = 3;
  CHECK_FALSE(store.record_measurement(kGraph, kCluster, r.placement, 0.5, 5, "cpu").value());  // no best yet
  REQUIRE(store.put_if_better(r).value());
  CHECK_FALSE(store.record_measurement(kGraph, kCluster, other, 0.5, 5, "cpu").value());
  CHECK(store.best(kGraph, kCluster).value()->measured_runs == 0);
  CHECK(store.record_measurement(kGraph, kCluster, r.placement, 0.5, 5, "cpu").value());
  const ScheduleRecord stored = *store.best(kGraph, kCluster).value();
  CHECK(stored.measured == 0.5);
  CHECK(stored.measured_runs == 5);
  CHECK(stored.measured_backend == "cpu");
  CHECK(stored.measured_at > 0);
  CHECK(stored.makespan == 10);  // the simulated makespan stays
  CHECK_FALSE(store.record_measurement(kGraph, kCluster, r.placement, -1, 5, "cpu").ok());
}
