// A worker's side of a lease, seen from its uplink: a test actor plays the coordinator (assign in,
// done out). A rollout that never answers costs its lease (failed past the deadline, so the
// coordinator runs the task elsewhere) and its slot is given a fresh rollout that does work.
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/messages.hpp"
#include "actors/place_task.hpp"
#include "actors/problem_spec.hpp"
#include "actors/worker_actor.hpp"
#include "tests/actors/tune_fixture.hpp"

using namespace gantry;
using namespace std::chrono_literals;

namespace {

// Takes every task and never answers.
caf::behavior silent_rollout(caf::event_based_actor* self) {
  return {[=](run_task_atom, const std::shared_ptr<const BuiltProblem>&, const RolloutTask&) -> caf::result<TaskResult> {
    return self->make_response_promise<TaskResult>();  // never delivered
  }};
}

wire::Envelope assign(std::uint64_t lease, const Fingerprint& problem, long sequence) {
  RolloutTask task{kPlaceTask, problem, encode_body(PlaceRequest{"single", 1, 0, 0}), 0, sequence, 0};
  return {"", wire::Type::assign, wire::encode(wire::Assign{lease, 0.3, task})};
}

// The next `done` the worker sends up.
wire::Done next_done(caf::scoped_actor& uplink) {
  wire::Done out;
  bool got = false;
  for (int i = 0; i < 200 && !got; ++i)
    uplink->receive(
        [&](net_out_atom, const wire::Envelope& e) {
          if (e.type != wire::Type::done) return;  // hello, heartbeats
          out = wire::decode<wire::Done>(e.payload).value();
          got = true;
        },
        caf::after(5s) >> [&] { i = 200; });
  REQUIRE(got);
  return out;
}

}  // namespace

TEST_CASE("a rollout that never answers loses its lease at the deadline and its slot gets a fresh rollout", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  testing::TuneFixture f;
  ProblemCache cache;
  const TuneProblem p = f.problem();
  auto built = cache.build(make_problem_spec(p.graph, p.cluster, p.sim, p.graph_label, p.graph_json));
  REQUIRE(built.ok());
  const Fingerprint key = built.value()->key;
  WorkerOptions options;
  options.name = "w";
  options.heartbeat_seconds = 0.1;  // the tick that checks deadlines
  options.liveness = 1000;
  caf::actor worker = spawn_worker(system, options, &cache, {system.spawn(silent_rollout)});
  caf::scoped_actor uplink{system};
  connect_worker(worker, uplink);
  uplink->send(worker, net_in_atom::value, assign(7, key, 1));
  const auto begin = std::chrono::steady_clock::now();
  const wire::Done lost = next_done(uplink);
  CHECK(lost.lease == 7);
  CHECK(lost.result.sequence == 1);
  CHECK_THAT(lost.result.error, Catch::Contains("deadline"));
  CHECK(std::chrono::steady_clock::now() - begin >= 300ms);  // not before the deadline
  // The slot works again, on a real rollout: the place task runs and answers.
  uplink->send(worker, net_in_atom::value, assign(8, key, 2));
  const wire::Done done = next_done(uplink);
  CHECK(done.lease == 8);
  CHECK(done.result.error.empty());
  const PlacementOutcome outcome = decode_place_result(done.result.body).value();
  CHECK(outcome.method == "single");
  CHECK(outcome.placement.size() == f.graph.size());
  CHECK(outcome.makespan == f.simulate(outcome.placement));
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}
