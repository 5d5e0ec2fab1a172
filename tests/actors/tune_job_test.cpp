#include "tests/actors/tune_fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "actors/tune_job.hpp"
#include "core/graph_io.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"
#include "storage/store.hpp"

using namespace gantry;

namespace {

using gantry::testing::TempDir;

using Fixture = gantry::testing::TuneFixture;
using gantry::testing::deterministic_options;

}  // namespace

TEST_CASE("a tuning job is deterministic under the test scheduler and stores its best", "[actors]") {
  Fixture f;
  TempDir a, b;
  auto first = run_tune_job(f.problem(), deterministic_options(a.path()));
  auto second = run_tune_job(f.problem(), deterministic_options(b.path()));
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  const TuneOutcome& t = first.value();
  CHECK(t.state == JobState::complete);
  CHECK(t.best.makespan == second.value().best.makespan);
  CHECK(t.evaluations == second.value().evaluations);
  CHECK(t.evaluations == 3000);  // the budget exactly, heuristics included
  CHECK(t.batches >= 12);
  CHECK(t.best.makespan <= t.heuristic_makespan);
  Simulator sim(f.graph, f.costs, f.cluster, f.sim);
  CHECK(sim.makespan(t.best.placement) == t.best.makespan);

  auto store = Store::open_read_only(a.path());
  REQUIRE(store.ok());
  auto best = store.value()->best(fingerprint(f.graph), runtime_fingerprint(f.cluster, f.sim));
  REQUIRE(best.ok());
  REQUIRE(best.value().has_value());
  CHECK(best.value()->makespan == t.best.makespan);
  CHECK(best.value()->job_id == t.job_id);
  auto job = store.value()->job(t.job_id);
  REQUIRE(job.ok());
  REQUIRE(job.value().has_value());
  CHECK(job.value()->state == JobState::complete);
  CHECK(job.value()->evaluations == t.evaluations);
  auto episodes = store.value()->episodes(t.job_id);
  REQUIRE(episodes.ok());
  CHECK(static_cast<long>(episodes.value().size()) == t.batches + 1);  // and episode 0, the heuristics
  auto history = store.value()->history(fingerprint(f.graph), runtime_fingerprint(f.cluster, f.sim));
  REQUIRE(history.ok());
  CHECK(history.value().back().makespan == t.best.makespan);
}

TEST_CASE("a job started again on the same problem resumes from the stored best", "[actors]") {
  Fixture f;
  TempDir dir;
  auto first = run_tune_job(f.problem(), deterministic_options(dir.path()));
  REQUIRE(first.ok());
  TuneOptions again = deterministic_options(dir.path());
  again.seed = 12;
  again.budget_evaluations = 500;
  auto second = run_tune_job(f.problem(), again);
  REQUIRE(second.ok());
  CHECK(second.value().resumed);
  CHECK(second.value().resumed_makespan == first.value().best.makespan);
  CHECK(second.value().best.makespan <= first.value().best.makespan);
}

TEST_CASE("a cancelled job ends CANCELLED and keeps its best", "[actors]") {
  Fixture f;
  TempDir dir;
  std::atomic<bool> cancel{true};
  TuneOptions o = deterministic_options(dir.path());
  o.cancel = &cancel;
  auto outcome = run_tune_job(f.problem(), o);
  INFO((outcome.ok() ? "" : outcome.error().message));
  REQUIRE(outcome.ok());
  CHECK(outcome.value().state == JobState::cancelled);
  auto store = Store::open_read_only(dir.path());
  REQUIRE(store.ok());
  auto job = store.value()->job(outcome.value().job_id);
  REQUIRE(job.ok());
  REQUIRE(job.value().has_value());
  CHECK(job.value()->state == JobState::cancelled);
  auto best = store.value()->best(fingerprint(f.graph), runtime_fingerprint(f.cluster, f.sim));
  REQUIRE(best.ok());
  CHECK(best.value().has_value());
}

TEST_CASE("threaded jobs with real rollout threads end and shut down", "[actors]") {
  Fixture f;
  TempDir dir;
  TuneOptions o;
  o.data_dir = dir.path();
  o.rollouts = 2;
  o.budget_seconds = 0.5;
  o.batch_seconds = 0.05;
  auto outcome = run_tune_job(f.problem(), o);
  REQUIRE(outcome.ok());
  CHECK(outcome.value().state == JobState::complete);
  CHECK(outcome.value().batches >= 2);
  CHECK(outcome.value().seconds < 5);
}
