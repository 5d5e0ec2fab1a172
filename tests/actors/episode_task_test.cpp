// The `episodes` task kind: its bodies round-trip and refuse damage, and a learner trains on
// episodes that went through the rollout pool to a worker and back.
#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "actors/cluster_node.hpp"
#include "actors/episode_task.hpp"
#include "actors/pool_episode_source.hpp"
#include "actors/problem_spec.hpp"
#include "learner/policy_model.hpp"
#include "learner/trainer.hpp"
#include "storage/store.hpp"
#include "tests/learner/learner_fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "workloads/workload.hpp"

using namespace gantry;
using gantry::testing::tiny_policy;

namespace {


struct FfnnProblem {
  Graph graph = make_workload("ffnn:costs=doppler,layers=2", 1).value();
  Cluster cluster = Cluster::identical(4).value();
  CostTable costs{graph, cluster};
  SimOptions sim;
  FfnnProblem() { sim.doppler = true; }
};

}  // namespace

TEST_CASE("episodes task bodies round-trip and damaged ones are refused", "[actors]") {
  FfnnProblem f;
  const TrainingProblem problem = make_training_problem("ffnn", f.graph, f.cluster, f.costs, f.sim);
  EpisodeRequest request;
  request.problem = 0;
  request.version = 41;
  request.count = 3;
  request.seed = 9;
  request.options.epsilon = 0.25;
  request.weights = std::make_shared<const PolicyWeights>(PolicyModel(tiny_policy(), 1).weights());
  auto back = decode_episode_request(encode_body(request));
  REQUIRE(back.ok());
  CHECK(back.value().version == 41);
  CHECK(back.value().count == 3);
  CHECK(back.value().options.epsilon == 0.25);
  CHECK(back.value().weights->at("plc.l2.w").data == request.weights->at("plc.l2.w").data);

  auto batch = run_episode_request(problem, back.value());
  REQUIRE(batch.ok());
  REQUIRE(batch.value().episodes.size() == 3);
  const std::string body = encode_body(batch.value());
  auto decoded = decode_episode_batch(body);
  REQUIRE(decoded.ok());
  CHECK(decoded.value().version == 41);
  CHECK(decoded.value().episodes[2].ops == batch.value().episodes[2].ops);
  CHECK(decoded.value().episodes[2].makespan == batch.value().episodes[2].makespan);
  for (std::size_t cut : {body.size() / 3, body.size() - 1}) CHECK_FALSE(decode_episode_batch(body.substr(0, cut)).ok());
  std::string req = encode_body(request);
  CHECK_FALSE(decode_episode_request(req.substr(0, req.size() / 2)).ok());
}

TEST_CASE("a learner trains on episodes from the rollout pool's workers", "[actors][cluster]") {
  FfnnProblem f;
  std::vector<TrainingProblem> problems{make_training_problem("ffnn", f.graph, f.cluster, f.costs, f.sim)};
  std::vector<ProblemSpec> specs{make_problem_spec(f.graph, f.cluster, f.sim, "ffnn")};
  gantry::testing::TempDir tmp;
  auto store = Store::open(tmp.file("db"));
  REQUIRE(store.ok());
  ProblemCache cache;  // before the actor system: its actors use it until the system is gone
  caf::actor_system_config cfg;
  configure_message_scheduler(cfg);
  caf::actor_system system{cfg};
  EmbeddedClusterOptions options;
  options.rollouts = 2;
  options.cache = &cache;
  auto cluster = start_embedded_cluster(system, std::shared_ptr<Store>(std::move(store).value()), options);
  REQUIRE(cluster.ok());
  PolicyModel model(tiny_policy(), 1);
  TrainOptions o;
  o.episodes = 48;
  o.batch = 8;
  Result<TrainResult> result = make_error("not run");
  {
    PoolEpisodeSource source(system, cluster.value().coordinator.pool, "learner-test", specs);
    // The embedded worker's 2 slots and one queued, once its hello has reached the pool.
    int slots = source.slots();
    for (int i = 0; i < 500 && slots != 3; ++i, slots = source.slots()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(slots == 3);
    result = train(model, problems, source, o);
  }
  cluster.value().shutdown(system);
  REQUIRE(result.ok());
  CHECK(result.value().episodes + result.value().dropped >= 48);
  CHECK(result.value().updates >= 4);
  const ProblemOutcome& out = result.value().problems.front();
  Simulator sim(f.graph, f.costs, f.cluster, f.sim);
  CHECK(sim.makespan(out.best) == Approx(out.best_makespan).epsilon(1e-12));
}
