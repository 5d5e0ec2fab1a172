// Which stored problem a coordinator tunes again when idle: the least recently tuned first, each
// through the spec of its newest job that has one, background runs counted as tuning.
#include <catch2/catch.hpp>

#include "actors/background_improvement.hpp"

using namespace gantry;

namespace {

Fingerprint fp(std::uint64_t n) {
  Fingerprint f;
  f.hi = n;
  f.lo = n * 7 + 1;
  return f;
}

JobRecord job(const std::string& id, const std::string& kind, std::uint64_t graph, std::uint64_t runtime, double started,
              JobState state = JobState::complete, const std::string& improves = "") {
  JobRecord r;
  r.id = id;
  r.kind = kind;
  r.graph = fp(graph);
  r.cluster = fp(runtime);
  r.started = started;
  r.state = state;
  r.improves = improves;
  // A restart rewrites a run's message ("interrupted: ..."): the record's `improves` still tells.
  r.message = improves.empty() ? "evaluation budget used" : "interrupted: its process ended (background improvement)";
  return r;
}

}  // namespace

TEST_CASE("background improvement takes the least recently tuned problem first, its newest submitted job first", "[actors]") {
  const std::vector<JobRecord> records = {
      job("a", "tune", 1, 1, 100),
      job("b", "tune", 1, 1, 300, JobState::interrupted, "a"),
      job("c", "pipeline", 2, 2, 200),
      job("d", "tune", 3, 1, 50, JobState::running),  // its problem is being tuned: left out
      job("d2", "tune", 3, 1, 40),
      job("e", "train", 4, 1, 10),                     // not a tuning job
      job("f", "tune", 1, 1, 150),
      job("g", "tune", 5, 1, 10, JobState::cancelled, "x"),  // no submitted job left
      job("h", "tune", 1, 2, 250),                     // the same graph on another runtime: another problem
      job("i", "measure", 6, 1, 5),
  };
  // Problem (2, 2) last started at 200, (1, 2) at 250, (1, 1) at 300 (its background run).
  CHECK(improvement_order(records) == std::vector<std::string>{"c", "h", "f", "a"});
}

TEST_CASE("background improvement: nothing to tune without stored tuning jobs, or while each is busy", "[actors]") {
  CHECK(improvement_order({}).empty());
  CHECK(improvement_order({job("q", "tune", 1, 1, 5, JobState::queued), job("r", "tune", 1, 1, 1)}).empty());
  CHECK(improvement_order({job("t", "train", 1, 1, 1)}).empty());
}

TEST_CASE("a background run is told by its record's source, whatever its message says", "[actors]") {
  CHECK(is_background_run(job("b", "tune", 1, 1, 1, JobState::interrupted, "a")));
  JobRecord client = job("a", "tune", 1, 1, 1);
  client.message = "background improvement of job z";
  CHECK_FALSE(is_background_run(client));
}

TEST_CASE("the background runs of a problem beyond the newest ones to keep, oldest first, none running", "[actors]") {
  const std::vector<JobRecord> records = {
      job("client", "tune", 1, 1, 1),
      job("r1", "tune", 1, 1, 10, JobState::complete, "client"),
      job("r2", "tune", 1, 1, 20, JobState::cancelled, "client"),
      job("r3", "tune", 1, 1, 30, JobState::interrupted, "client"),
      job("r4", "tune", 1, 1, 40, JobState::complete, "client"),
      job("other", "tune", 1, 2, 5, JobState::complete, "client2"),  // another runtime
  };
  CHECK(background_runs_beyond(records, fp(1), fp(1), 2) == std::vector<std::string>{"r1", "r2"});
  CHECK(background_runs_beyond(records, fp(1), fp(1), 4).empty());
  CHECK(background_runs_beyond(records, fp(1), fp(2), 0) == std::vector<std::string>{"other"});
  std::vector<JobRecord> running = records;
  running[1].state = JobState::running;  // r1: never dropped while it runs
  CHECK(background_runs_beyond(running, fp(1), fp(1), 2) == std::vector<std::string>{"r2"});
}

TEST_CASE("a stored best at its lower bound has nothing left to improve", "[actors]") {
  ScheduleRecord best;
  best.makespan = 10;
  best.lower_bound = 10;
  CHECK(at_lower_bound(best));
  best.makespan = 10.001;
  CHECK_FALSE(at_lower_bound(best));
  best.lower_bound = 0;  // no bound known
  best.makespan = 0;
  CHECK_FALSE(at_lower_bound(best));
}
