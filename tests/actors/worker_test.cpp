// A worker's side of a lease, seen from its uplink: a test actor plays the coordinator (assign in,
// done out). A rollout that never answers costs its lease (failed past the deadline, so the
// coordinator runs the task elsewhere) and its slot is given a fresh rollout that does work.
#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "actors/measure_task.hpp"
#include "actors/messages.hpp"
#include "actors/place_task.hpp"
#include "actors/pool_measurer.hpp"
#include "actors/rollout_pool.hpp"
#include "actors/problem_spec.hpp"
#include "actors/worker_actor.hpp"
#include "core/graph_io.hpp"
#include "core/op_signature.hpp"
#include "core/profile_table.hpp"
#include "tests/actors/tune_fixture.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/recording_program.hpp"
#include "tests/support/release_on_exit.hpp"
#include "tests/support/stderr_to_file.hpp"
#include "tests/support/temp_dir.hpp"
#include "workloads/workload.hpp"

using namespace gantry;
using namespace std::chrono_literals;

namespace {

// Takes every task and never answers.
caf::behavior silent_rollout(caf::event_based_actor* self) {
  return {[=](run_task_atom, const std::shared_ptr<const BuiltProblem>&, const RolloutTask&) -> caf::result<TaskResult> {
    return self->make_response_promise<TaskResult>();  // never delivered
  }};
}

wire::Envelope assign(std::uint64_t lease, const Fingerprint& problem, long sequence, const std::string& kind = kPlaceTask,
                      double deadline = 0.3) {
  RolloutTask task{kind, problem, encode_body(PlaceRequest{"single", 1, 0, 0}), 0, sequence, 0};
  return {"", wire::Type::assign, wire::encode(wire::Assign{lease, deadline, task})};
}

// When each task ran, by kind: what a rollout that takes `task_time` per task saw.
struct Interval {
  std::string kind;
  long sequence = 0;
  std::chrono::steady_clock::time_point start, end;
};
struct Timeline {
  std::mutex mutex;
  std::vector<Interval> runs;
};

caf::behavior timed_rollout(caf::event_based_actor*, std::shared_ptr<Timeline> timeline,
                            std::chrono::milliseconds task_time) {
  return {[=](run_task_atom, const std::shared_ptr<const BuiltProblem>&, const RolloutTask& task) {
    Interval run{task.kind, task.sequence, std::chrono::steady_clock::now(), {}};
    std::this_thread::sleep_for(task_time);
    run.end = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(timeline->mutex);
    timeline->runs.push_back(run);
    TaskResult result;
    result.sequence = task.sequence;
    return result;
  }};
}

// The next `done` the worker sends up; the slots of the hellos before it go to `hello_slots`.
wire::Done next_done(caf::scoped_actor& uplink, std::vector<int>* hello_slots = nullptr) {
  wire::Done out;
  bool got = false;
  for (int i = 0; i < 200 && !got; ++i)
    uplink->receive(
        [&](net_out_atom, const wire::Envelope& e) {
          if (e.type == wire::Type::hello && hello_slots) hello_slots->push_back(wire::decode<wire::Hello>(e.payload).value().slots);
          if (e.type != wire::Type::done) return;  // hello, heartbeats
          out = wire::decode<wire::Done>(e.payload).value();
          got = true;
        },
        caf::after(5s) >> [&] { i = 200; });
  REQUIRE(got);
  return out;
}

// An actor system, the tune fixture's problem, and that problem built into a worker's cache.
struct WorkerSetup {
  ProblemCache cache;  // before the actor system: its actors use it until the system is gone
  ProblemCache empty;  // a worker's that has built nothing yet
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  testing::TuneFixture f;
  TuneProblem p = f.problem();
  std::shared_ptr<const BuiltProblem> built = build(cache, p);

  static std::shared_ptr<const BuiltProblem> build(ProblemCache& cache, const TuneProblem& p) {
    auto built = cache.build(make_problem_spec(p.graph, p.cluster, p.sim, p.graph_label, p.graph_json));
    REQUIRE(built.ok());
    return built.value();
  }
};

// Stops the worker when the test leaves, failed checks included (a worker left running keeps the
// actor system, and so the test binary, from ending).
struct StopsWorker {
  caf::actor worker;
  ~StopsWorker() { caf::anon_send_exit(worker, caf::exit_reason::user_shutdown); }
};

}  // namespace

TEST_CASE("a rollout that never answers loses its lease at the deadline and its slot gets a fresh rollout", "[actors]") {
  WorkerSetup setup;
  caf::actor_system& system = setup.system;
  ProblemCache& cache = setup.cache;
  const std::shared_ptr<const BuiltProblem>& built = setup.built;
  const Fingerprint key = built->key;
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
  CHECK(outcome.placement.size() == setup.f.graph.size());
  CHECK(outcome.makespan == setup.f.simulate(outcome.placement));
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_CASE("a worker with executor devices offers measure kinds and runs a measurement alone", "[actors]") {
  WorkerSetup setup;
  caf::actor_system& system = setup.system;
  ProblemCache& cache = setup.cache;
  const std::shared_ptr<const BuiltProblem>& built = setup.built;
  const Fingerprint key = built->key;
  WorkerOptions options;
  options.name = "meter";
  options.devices = ExecutorDevices{"cpu", 2};
  options.liveness = 1000;
  auto timeline = std::make_shared<Timeline>();
  std::vector<caf::actor> rollouts;
  for (int i = 0; i < 3; ++i) rollouts.push_back(system.spawn<caf::detached>(timed_rollout, timeline, 50ms));
  caf::actor worker = spawn_worker(system, options, &cache, rollouts);
  caf::scoped_actor uplink{system};
  connect_worker(worker, uplink);
  std::vector<std::string> kinds;
  uplink->receive([&](net_out_atom, const wire::Envelope& e) {
    REQUIRE(e.type == wire::Type::hello);
    kinds = wire::decode<wire::Hello>(e.payload).value().kinds;
  });
  const auto offers = [&](const std::string& kind) { return std::find(kinds.begin(), kinds.end(), kind) != kinds.end(); };
  CHECK(offers(kPlaceTask));
  CHECK(offers("measure:cpu:1"));
  CHECK(offers("measure:cpu:2"));
  CHECK_FALSE(offers("measure:cpu:3"));

  // Three slots: two rollouts start, then a measurement waits for them, and the two after it wait
  // for the measurement.
  uplink->send(worker, net_in_atom::value, assign(1, key, 1, kPlaceTask, 10));
  uplink->send(worker, net_in_atom::value, assign(2, key, 2, kPlaceTask, 10));
  uplink->send(worker, net_in_atom::value, assign(3, key, 3, measure_kind("cpu", 2), 10));
  uplink->send(worker, net_in_atom::value, assign(4, key, 4, kPlaceTask, 10));
  uplink->send(worker, net_in_atom::value, assign(5, key, 5, kPlaceTask, 10));
  for (int i = 0; i < 5; ++i) CHECK(next_done(uplink).result.error.empty());
  std::lock_guard<std::mutex> lock(timeline->mutex);
  REQUIRE(timeline->runs.size() == 5);
  const auto measurement = std::find_if(timeline->runs.begin(), timeline->runs.end(), [](const Interval& r) { return r.sequence == 3; });
  REQUIRE(measurement != timeline->runs.end());
  CHECK(measurement->kind == "measure:cpu:2");
  for (const Interval& r : timeline->runs) {
    if (r.sequence == 3) continue;
    INFO("task " << r.sequence);
    const bool before = r.end <= measurement->start, after = r.start >= measurement->end;
    CHECK((before || after));            // nothing overlaps the measurement
    CHECK(before == (r.sequence < 3));   // those leased before it ran first, those after it after
  }
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_CASE("a measurement given up on at its deadline holds the worker until it has really ended", "[actors]") {
  // The run cannot be interrupted: its lease fails at the deadline (the coordinator measures
  // elsewhere), but a task started beside it would share the cores it is timing. Meanwhile the
  // worker announces no slots (before the failure, so that the retry is not leased back to it),
  // and its slots again when the run is over.
  WorkerSetup setup;
  caf::actor_system& system = setup.system;
  const Fingerprint key = setup.built->key;
  WorkerOptions options;
  options.name = "meter";
  options.devices = ExecutorDevices{"cpu", 1};
  options.heartbeat_seconds = 0.05;  // the tick that checks deadlines
  options.liveness = 1000;
  auto timeline = std::make_shared<Timeline>();
  std::vector<caf::actor> rollouts;
  for (int i = 0; i < 2; ++i) rollouts.push_back(system.spawn<caf::detached>(timed_rollout, timeline, 1000ms));
  caf::actor worker = spawn_worker(system, options, &setup.cache, rollouts);
  const StopsWorker stop{worker};
  caf::scoped_actor uplink{system};
  connect_worker(worker, uplink);
  uplink->send(worker, net_in_atom::value, assign(1, key, 1, measure_kind("cpu", 1), 0.1));
  std::vector<int> hellos;
  const wire::Done lost = next_done(uplink, &hellos);
  CHECK(lost.lease == 1);
  CHECK_THAT(lost.result.error, Catch::Contains("deadline"));
  CHECK(hellos == std::vector<int>{2, 0});  // on connecting, then busy before the failure
  // A measurement leased before the coordinator heard fails at once, not at its deadline.
  uplink->send(worker, net_in_atom::value, assign(3, key, 3, measure_kind("cpu", 1), 10));
  const wire::Done refused = next_done(uplink);
  CHECK(refused.lease == 3);
  CHECK_THAT(refused.result.error, Catch::Contains("still running a measurement given up on"));
  {
    std::lock_guard<std::mutex> lock(timeline->mutex);
    CHECK(timeline->runs.empty());  // before the abandoned one ended
  }
  // A slot is idle (and the given-up one has a fresh rollout), yet the next task waits.
  uplink->send(worker, net_in_atom::value, assign(2, key, 2, kPlaceTask, 10));
  hellos.clear();
  const wire::Done next = next_done(uplink, &hellos);
  CHECK(hellos == std::vector<int>{2});  // the run is over: its slots again
  const auto answered = std::chrono::steady_clock::now();
  CHECK(next.lease == 2);
  CHECK(next.result.error.empty());
  std::lock_guard<std::mutex> lock(timeline->mutex);
  const auto measurement = std::find_if(timeline->runs.begin(), timeline->runs.end(), [](const Interval& r) { return r.sequence == 1; });
  REQUIRE(measurement != timeline->runs.end());  // it ran to its end
  for (const Interval& r : timeline->runs)
    if (r.sequence == 2) CHECK(r.start >= measurement->end);  // when a timed rollout took it
  CHECK(answered >= measurement->end);
}

TEST_CASE("a measurement with no worker offering the devices fails after the wait and says how to start one", "[actors]") {
  WorkerSetup setup;
  caf::actor_system& system = setup.system;
  const TuneProblem& p = setup.p;
  const std::shared_ptr<const BuiltProblem>& built = setup.built;
  PoolOptions pool_options;
  pool_options.announce = false;
  caf::actor pool = spawn_rollout_pool(system, pool_options);
  // The fixture's devices are not of kind CPU: the cluster is measured on cuda devices.
  const std::string devices = "cuda:" + std::to_string(p.cluster.size());
  REQUIRE(measure_kind(p.cluster) == "measure:" + devices);
  {
    PoolMeasurer measurer(system, pool, "job", {built}, 0, MeasureRequest{}, nullptr, 0.3);
    std::vector<std::string> said;  // what a follower sees while it waits (`execute --coordinator`)
    measurer.report_status([&said](const std::string& line) { said.push_back(line); });
    const auto begin = std::chrono::steady_clock::now();
    Placement single;
    single.device.assign(static_cast<std::size_t>(p.graph.size()), 0);
    auto measured = measurer.measure(single);
    CHECK(std::chrono::steady_clock::now() - begin >= 300ms);
    REQUIRE_FALSE(measured.ok());
    CHECK_THAT(measured.error().message, Catch::Contains("no worker offers measure:" + devices) &&
                                             Catch::Contains("gantry worker --devices " + devices));
    // Said once, as the wait began, not only when it ended in failure.
    REQUIRE(said.size() == 1);
    CHECK_THAT(said.front(), Catch::Contains("waiting") && Catch::Contains("measure:" + devices) &&
                                 Catch::Contains("gantry worker --devices " + devices));
  }
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

TEST_CASE("a lease whose problem never comes fails at its deadline and does not hold the worker", "[actors]") {
  WorkerSetup setup;
  caf::actor_system& system = setup.system;
  ProblemCache& cache = setup.cache;
  const std::shared_ptr<const BuiltProblem>& built = setup.built;
  WorkerOptions options;
  options.name = "w";
  options.heartbeat_seconds = 0.1;
  options.liveness = 1000;
  options.devices = ExecutorDevices{"cuda", 2};
  caf::actor worker = spawn_worker(system, options, &cache, {spawn_rollout(system, options, 0)});
  caf::scoped_actor uplink{system};
  connect_worker(worker, uplink);
  // A measurement of a problem nobody sends (its job was cancelled): it waits, and holds back the
  // rollout leased after it, until its deadline.
  const Fingerprint unknown{1, 2};
  uplink->send(worker, net_in_atom::value, assign(1, unknown, 1, measure_kind("cuda", 2), 0.3));
  uplink->send(worker, net_in_atom::value, assign(2, built->key, 2, kPlaceTask, 10));
  const wire::Done failed = next_done(uplink);
  CHECK(failed.lease == 1);
  CHECK_THAT(failed.result.error, Catch::Contains("deadline"));
  const wire::Done ran = next_done(uplink);
  CHECK(ran.lease == 2);
  CHECK(ran.result.error.empty());
  caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
}

TEST_CASE("a worker asks for a problem once and builds it once while the build runs", "[actors]") {
  // The build runs off the worker's thread and is held here: meanwhile the worker's ticks (every
  // 0.1 s) must not ask for the problem again, nor must a second copy of the content start a
  // second build (each is a graph's whole content: megabytes, and seconds of building).
  WorkerSetup setup;
  caf::actor_system& system = setup.system;
  const Fingerprint key = setup.built->key;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> builds{0};
  WorkerOptions options;
  options.name = "w";
  options.heartbeat_seconds = 0.1;
  options.liveness = 1000;
  options.before_build = [&builds, released] {
    ++builds;
    released.wait();
  };
  caf::actor worker = spawn_worker(system, options, &setup.empty, {spawn_rollout(system, options, 0)});
  StopsWorker stops{worker};
  gantry::testing::ReleaseOnExit guard{release};
  caf::scoped_actor uplink{system};
  connect_worker(worker, uplink);
  uplink->send(worker, net_in_atom::value, assign(7, key, 1, kPlaceTask, 30));
  int asked = 0;
  const auto count_asks = [&](std::chrono::milliseconds how_long) {
    const auto until = std::chrono::steady_clock::now() + how_long;
    while (std::chrono::steady_clock::now() < until)
      uplink->receive([&](net_out_atom, const wire::Envelope& e) { asked += e.type == wire::Type::need_problem; },
                      caf::after(20ms) >> [] {});
  };
  for (int i = 0; i < 100 && asked == 0; ++i) count_asks(50ms);
  REQUIRE(asked == 1);
  const TuneProblem& p = setup.p;
  const wire::Envelope content{"", wire::Type::problem,
                               wire::encode(wire::ProblemContent{key, make_problem_spec(p.graph, p.cluster, p.sim, p.graph_label, p.graph_json)})};
  uplink->send(worker, net_in_atom::value, content);
  for (int i = 0; i < 500 && builds == 0; ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(builds == 1);
  uplink->send(worker, net_in_atom::value, content);  // the coordinator answered a second ask
  count_asks(1000ms);                                  // ten ticks
  CHECK(asked == 1);
  CHECK(builds == 1);
  guard.now();
  const wire::Done done = next_done(uplink);
  CHECK(done.lease == 7);
  CHECK(done.result.error.empty());
}

TEST_CASE("a worker's slot measures through its gantry-exec program when its devices name one", "[actors]") {
  // The program is a script that notes each call and runs gantry-exec: the note shows the
  // measurement went through it, the answer that gantry-exec's run came back.
  const testing::TempDir dir;
  const std::string script = testing::recorded_gantry_exec(dir, GANTRY_EXEC_BINARY), calls = dir.file("calls");
  ProblemCache cache;
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  const Graph graph = make_workload("ffnn:layers=1,blocks=2,batch=64,hidden=64").value();
  const Cluster cluster = Cluster::load("cpu-2").value();
  auto built = cache.build(make_problem_spec(graph, cluster, SimOptions{}, "ffnn", graph_to_json(graph, -1)));
  REQUIRE(built.ok());
  WorkerOptions options;
  options.devices = ExecutorDevices{"cpu", 2, script};
  caf::actor slot = spawn_rollout(system, options, 0);
  MeasureRequest request;
  for (OpId op = 0; op < graph.size(); ++op) request.placement.device.push_back(op % 2);
  request.repeats = 2;
  request.warmup = 0;
  request.pin_threads = false;
  const RolloutTask task{measure_kind("cpu", 2), built.value()->key, encode_body(request), 0, 1, 0};
  caf::scoped_actor self{system};
  TaskResult result;
  self->request(slot, 60s, run_task_atom::value, built.value(), task)
      .receive([&](const TaskResult& r) { result = r; }, [&](const caf::error& e) { FAIL(system.render(e)); });
  INFO(result.error);
  REQUIRE(result.error.empty());
  const MeasureAnswer answer = decode_measure_answer(result.body).value();
  CHECK(answer.backend == "cpu");
  CHECK(answer.makespans.size() == 2);
  // Every op's time came back as a profile sample: one per op, under its signature on kind CPU.
  auto samples = profiles_from_json(answer.profile_samples, "the answer");
  REQUIRE(samples.ok());
  std::map<std::string, double> ops_per_signature;
  for (OpId op = 0; op < graph.size(); ++op) ops_per_signature[op_signature(graph, op).signature] += 1;
  std::map<std::string, double> sampled;
  for (const ProfileEntry& e : samples.value().entries())
    if (e.device_kind == "CPU") sampled[e.op.signature] += static_cast<double>(e.seconds.count);
  CHECK(sampled == ops_per_signature);
  const std::string called = testing::read_text(calls);
  CHECK_THAT(called, Catch::Contains(R"("--backend","cpu","--devices","2","--streams","1","--repeats","2","--warmup","0")"));
  CHECK_THAT(called, Catch::Contains(R"("--no-pin")"));
  caf::anon_send_exit(slot, caf::exit_reason::user_shutdown);
}


TEST_CASE("a networked worker says when its coordinator is silent, when it joins and when it answers again", "[actors]") {
  WorkerSetup setup;
  testing::TempDir dir;
  const std::string log = dir.file("stderr.txt");
  WorkerOptions options;
  options.name = "w";
  options.coordinator = "tcp://nowhere:1";
  options.heartbeat_seconds = 0.02;
  options.silence_report_seconds = 0.2;
  const std::string silent = " (is `gantry coordinator` running there? with CURVE keys, is this worker's key in its --authorized-keys?); still trying";
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  // Waits (polling the captured lines) until `what` has been said `times` times.
  const auto until_said = [&](const std::string& what, std::size_t times) {
    for (int i = 0; i < 500 && count(testing::read_text(log), what) < times; ++i) std::this_thread::sleep_for(10ms);
    return count(testing::read_text(log), what) >= times;
  };
  const std::string first = "gantry worker w: no answer from the coordinator at tcp://nowhere:1 for 0.2 s" + silent;
  const std::string second = "gantry worker w: no answer from the coordinator at tcp://nowhere:1 for 0.4 s" + silent;
  const std::string joined = "gantry worker w: joined the coordinator at tcp://nowhere:1";
  const std::string again = "gantry worker w: the coordinator at tcp://nowhere:1 answers again";
  std::string said;
  {
    testing::StderrToFile capture(log);
    caf::actor worker = spawn_worker(setup.system, options, &setup.cache, {setup.system.spawn(silent_rollout)});
    StopsWorker stops{worker};
    caf::scoped_actor uplink{setup.system};
    connect_worker(worker, uplink);
    const auto heartbeat = [&] { uplink->send(worker, net_in_atom::value, wire::Envelope{"", wire::Type::heartbeat, wire::encode_empty()}); };
    CHECK(until_said(second, 1));  // never heard: reports at 0.2 and 0.4 s
    heartbeat();
    CHECK(until_said(joined, 1));
    CHECK(until_said(first, 2));   // silent again: from 0.2 s on
    heartbeat();
    CHECK(until_said(again, 1));
    said = capture.text();
  }
  // In that order (a slow machine may add later reports, at 0.8 s and on, between them).
  const std::size_t at_second = said.find(second), at_joined = said.find(joined), at_again = said.find(again);
  CHECK(said.find(first) < at_second);
  CHECK(at_second < at_joined);
  CHECK(at_joined < said.find(first, at_joined));
  CHECK(said.find(first, at_joined) < at_again);
  CHECK(count(said, joined) == 1);
}
