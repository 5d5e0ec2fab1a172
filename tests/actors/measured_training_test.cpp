// Stage III on the embedded cluster: a learner job whose episodes are measured by the embedded
// worker's executor devices, stopped while it measures, ends CANCELLED with what it learned stored.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "actors/embedded_job.hpp"
#include "core/graph_io.hpp"
#include "storage/store.hpp"
#include "tests/support/temp_dir.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

TEST_CASE("a stage III job stopped while it measures ends CANCELLED and keeps its measured policy", "[actors][slow]") {
  gantry::testing::TempDir tmp;
  const Graph graph = make_workload("ffnn:layers=1,blocks=2,batch=64,hidden=64").value();
  const Cluster cluster = Cluster::load("cpu-2").value();
  JobSpec spec;
  spec.kind = "train";
  spec.problem = make_problem_spec(graph, cluster, SimOptions{}, "ffnn", graph_to_json(graph, -1));
  spec.budget_seconds = 0;
  spec.train.stage = "real";
  spec.train.episodes = 1000000;  // far more than it has time for: the stop ends it
  spec.train.batch = 4;
  auto store = Store::open(tmp.file("db"));
  REQUIRE(store);
  std::atomic<bool> cancel{false};
  std::optional<LearnerReport> report;
  EmbeddedJobOptions options;
  options.rollouts = 1;
  options.devices = ExecutorDevices{"cpu", 2};
  options.cancel = &cancel;
  options.hooks.on_learned = [&](const LearnerReport& r) { report = r; };
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    cancel = true;
  });
  auto outcome = run_embedded_job(std::shared_ptr<Store>(std::move(store).value()), spec, options);
  stopper.join();
  REQUIRE(outcome);
  CHECK(outcome.value().state == JobState::cancelled);
  INFO(outcome.value().stop_reason);
  REQUIRE(report);
  CHECK(report->stopped);
  // Stopped before its outcomes were measured: its bests are the simulator's prices of its
  // placements, on the simulator's clock with its teacher, not measured ones.
  CHECK_FALSE(report->measured);
  CHECK(report->episodes > 0);
  CHECK_FALSE(report->policy.empty());  // stored
  REQUIRE(report->graphs.size() == 1);
  CHECK(report->graphs[0].best_makespan > 0);
  CHECK(report->graphs[0].teacher_makespan > 0);
}
