// A learner job's checkpoint: its record round-trips and refuses damage; a job writes it while it
// trains and drops it when it ends; a rerun of the job (the same id, after its process died) goes
// on from it instead of starting over.
#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "actors/cluster_node.hpp"
#include "actors/learner_checkpoint.hpp"
#include "actors/learner_run.hpp"
#include "actors/problem_spec.hpp"
#include "core/graph_io.hpp"
#include "learner/policy_model.hpp"
#include "sim/simulator.hpp"
#include "storage/store.hpp"
#include "tests/learner/learner_fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "workloads/workload.hpp"

using namespace gantry;
using gantry::testing::tiny_policy;
using namespace std::chrono_literals;

namespace {

// An il+sim job of 80 episodes (16 of imitation, 64 of reinforce) with a tiny policy on FFNN.
struct CheckpointSetup {
  Graph graph = make_workload("ffnn:costs=doppler,layers=2", 1).value();
  Cluster cluster = Cluster::identical(4).value();
  SimOptions sim = [] {
    SimOptions o;
    o.doppler = true;
    return o;
  }();
  gantry::testing::TempDir tmp;
  std::shared_ptr<Store> store{std::move(Store::open(tmp.file("db")).value())};
  ProblemCache cache;  // before the actor system: its actors use it until the system is gone
  caf::actor_system_config cfg;
  caf::actor_system system{(configure_message_scheduler(cfg), cfg)};
  EmbeddedCluster nodes = start();
  JobSpec spec = train_spec();

  EmbeddedCluster start() {
    EmbeddedClusterOptions options;
    options.rollouts = 2;
    options.cache = &cache;
    return start_embedded_cluster(system, store, options).value();
  }
  JobSpec train_spec() const {
    JobSpec s;
    s.kind = "train";
    s.problem = make_problem_spec(graph, cluster, sim, "ffnn", graph_to_json(graph, -1));
    s.train.stage = "il+sim";
    s.train.episodes = 80;
    s.train.batch = 8;
    s.train.progress_every = 8;
    s.train.hidden = 8;
    s.train.head = 8;
    s.train.state = 4;
    s.train.steps = 1;
    return s;
  }
  ~CheckpointSetup() { nodes.shutdown(system); }

  Result<LearnerReport> run(const std::string& job, const LearnerHooks& hooks) {
    return run_learner(system, nodes.coordinator.store, nodes.coordinator.pool, spec, job, &cache, hooks);
  }
  // The job's checkpoint as the store has it now.
  std::optional<std::string> checkpoint(const std::string& job) const {
    auto c = store->checkpoint(job);
    REQUIRE(c.ok());
    return c.value();
  }
  double price(const Placement& placement) const {
    CostTable costs(graph, cluster);
    return Simulator(graph, costs, cluster, sim).makespan(placement);
  }
};


}  // namespace

TEST_CASE("a learner checkpoint round-trips and damaged ones are refused", "[actors]") {
  LearnerCheckpoint c;
  c.stage = 1;
  c.stage_episodes = 24;
  c.stage_seconds = 1.25;
  c.episodes = 40;
  c.batches = 5;
  c.seconds = 2.5;
  c.weights = PolicyModel(tiny_policy(), 3).weights().to_bytes();
  c.best_makespans = {7.5, std::numeric_limits<double>::infinity()};
  c.bests = {Placement{{0, 1, 1}, {}}, Placement{}};
  const std::string bytes = encode_checkpoint(c);
  auto back = decode_checkpoint(bytes);
  REQUIRE(back.ok());
  CHECK(back.value().stage == 1);
  CHECK(back.value().stage_episodes == 24);
  CHECK(back.value().stage_seconds == 1.25);
  CHECK(back.value().episodes == 40);
  CHECK(back.value().batches == 5);
  CHECK(back.value().seconds == 2.5);
  CHECK(back.value().weights == c.weights);
  CHECK(back.value().best_makespans[0] == 7.5);
  CHECK(std::isinf(back.value().best_makespans[1]));
  CHECK(back.value().bests[0].device == std::vector<std::int32_t>{0, 1, 1});
  CHECK(back.value().bests[1].device.empty());
  for (std::size_t cut : {bytes.size() / 2, bytes.size() - 1}) CHECK_FALSE(decode_checkpoint(bytes.substr(0, cut)).ok());
  LearnerCheckpoint uneven = c;
  uneven.bests.pop_back();
  CHECK_THAT(decode_checkpoint(encode_checkpoint(uneven)).error().message, Catch::Contains("1 bests for 2 makespans"));
  LearnerCheckpoint negative = c;
  negative.stage_episodes = -8;  // would enlarge what is left of the stage
  CHECK_THAT(decode_checkpoint(encode_checkpoint(negative)).error().message,
             Catch::Contains("learner checkpoint.stage_episodes: -8"));
}

TEST_CASE("a learner job checkpoints while it trains and leaves the last for the coordinator to drop", "[actors][cluster]") {
  CheckpointSetup s;
  std::optional<LearnerCheckpoint> seen;
  LearnerHooks hooks;
  hooks.checkpoint_seconds = 0;  // after every update
  hooks.should_stop = [&] {      // polled after every batch: read the store as a restarted job would
    if (!seen)
      if (auto bytes = s.checkpoint("job-a")) seen = decode_checkpoint(*bytes).value();
    return false;
  };
  auto report = s.run("job-a", hooks);
  REQUIRE(report.ok());
  REQUIRE(seen);
  // The first one: written after imitation's first update (one batch of 8), before the next poll.
  CHECK(seen->stage == 0);
  CHECK(seen->stage_episodes == 8);
  CHECK(seen->episodes == 8);
  CHECK(seen->batches >= 1);
  CHECK_FALSE(seen->measured_folded);
  CHECK(PolicyWeights::from_bytes(seen->weights, "the checkpoint").ok());
  REQUIRE(seen->bests.size() == 1);
  REQUIRE(std::isfinite(seen->best_makespans[0]));
  CHECK(s.price(seen->bests[0]) == Approx(seen->best_makespans[0]).epsilon(1e-12));  // the simulator's price
  CHECK(s.checkpoint("job-a"));  // left for the coordinator, which drops it once the end is recorded
}

TEST_CASE("a rerun of a learner job goes on from its checkpoint", "[actors][cluster]") {
  CheckpointSetup s;
  const PolicyWeights weights = PolicyModel(tiny_policy(), 5).weights();
  Placement one_device;
  one_device.device.assign(static_cast<std::size_t>(s.graph.size()), 0);
  LearnerCheckpoint c;
  c.episodes = 1000;  // far from what this job runs in all, so the totals show where it went on from
  c.batches = 125;
  c.seconds = 30;
  c.weights = weights.to_bytes();
  c.best_makespans = {s.price(one_device)};
  c.bests = {one_device};

  SECTION("every stage done: nothing is trained, the checkpoint's policy and best are the result") {
    c.stage = 2;
    REQUIRE(s.store->put_checkpoint("job-b", encode_checkpoint(c)).ok());
    auto report = s.run("job-b", LearnerHooks{});
    REQUIRE(report.ok());
    CHECK(report.value().episodes == 1000);
    CHECK(report.value().weights == c.weights);
    CHECK(report.value().graphs[0].best_makespan <= c.best_makespans[0]);
    CHECK(report.value().graphs[0].greedy_makespan > 0);  // of the checkpoint's policy
    auto stored = s.store->policy("doppler");
    REQUIRE(stored.ok());
    REQUIRE(stored.value());
    CHECK(stored.value()->weights == c.weights);
    CHECK(s.checkpoint("job-b"));  // left for the coordinator, which drops it once the end is recorded
  }
  SECTION("in the middle of reinforce: imitation is not run again and reinforce runs what it had left") {
    c.stage = 1;
    c.stage_episodes = 32;  // of its 64
    c.stage_seconds = 1;
    REQUIRE(s.store->put_checkpoint("job-c", encode_checkpoint(c)).ok());
    std::vector<Stage> progress;
    LearnerHooks hooks;
    hooks.on_progress = [&](Stage stage, const CurvePoint&) { progress.push_back(stage); };
    auto report = s.run("job-c", hooks);
    REQUIRE(report.ok());
    REQUIRE_FALSE(progress.empty());
    for (Stage stage : progress) CHECK(stage == Stage::reinforce);
    // 32 episodes left, and the batches still out when they are in (2 slots and a queued one).
    CHECK(report.value().episodes >= 1000 + 32);
    CHECK(report.value().episodes <= 1000 + 32 + 3 * 8);
    CHECK(report.value().seconds > 30);
    CHECK(report.value().graphs[0].best_makespan <= c.best_makespans[0]);
    CHECK(s.checkpoint("job-c"));  // left for the coordinator, which drops it once the end is recorded
  }
  SECTION("a checkpoint for another stage plan or graph is ignored: the job starts over") {
    c.stage = GENERATE(5, 0);
    if (c.stage == 0) c.bests[0].device.pop_back();  // one op short of this graph
    REQUIRE(s.store->put_checkpoint("job-d", encode_checkpoint(c)).ok());
    auto report = s.run("job-d", LearnerHooks{});
    REQUIRE(report.ok());
    CHECK(report.value().episodes >= 80);
    CHECK(report.value().episodes < 1000);
    CHECK(s.checkpoint("job-d"));  // left for the coordinator, which drops it once the end is recorded
  }
  SECTION("a job that keeps no checkpoints neither reads nor drops one") {
    c.stage = 2;
    REQUIRE(s.store->put_checkpoint("job-e", encode_checkpoint(c)).ok());
    LearnerHooks hooks;
    hooks.checkpoints = false;
    auto report = s.run("job-e", hooks);
    REQUIRE(report.ok());
    CHECK(report.value().episodes >= 80);
    CHECK(report.value().episodes < 1000);
    CHECK(s.checkpoint("job-e"));
  }
}
