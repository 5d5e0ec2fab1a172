// Budgets, stop reasons and faults of tuning jobs: exact evaluation budgets, --patience, a rollout
// or the store failing (the job ends FAILED with its best), threads that cannot be created, a
// killed job's successor resuming, and the store actor's WAL timer surviving a failed sync.
#include <sys/wait.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <catch2/catch.hpp>
#include <atomic>
#include <fstream>
#include <future>
#include <numeric>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/host_name.hpp"
#include "actors/cluster_node.hpp"
#include "actors/coordinator_state.hpp"
#include "actors/messages.hpp"
#include "actors/net/wire.hpp"
#include "actors/anneal_task.hpp"
#include "actors/place_task.hpp"
#include "actors/store_actor.hpp"
#include "actors/tune_job.hpp"
#include "core/graph_io.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"
#include "storage/store.hpp"
#include "tests/actors/tune_fixture.hpp"
#include "tests/support/release_on_exit.hpp"
#include "tests/support/rocks_files.hpp"
#include "tests/support/temp_dir.hpp"

using namespace gantry;
using gantry::testing::TempDir;

namespace {

using Fixture = gantry::testing::TuneFixture;

TuneOptions deterministic(const std::string& dir, long evals = 3000) { return gantry::testing::deterministic_options(dir, evals); }

long episode_evaluations(const std::string& dir, const std::string& job) {
  auto store = Store::open_read_only(dir).value();
  auto episodes = store->episodes(job).value();
  return std::accumulate(episodes.begin(), episodes.end(), 0L,
                         [](long sum, const EpisodeRecord& e) { return sum + e.candidates; });
}

JobRecord stored_job(const std::string& dir, const std::string& id) {
  auto store = Store::open_read_only(dir).value();
  return *store->job(id).value();
}

}  // namespace

TEST_CASE("an evaluation budget is honoured exactly, heuristics included", "[actors]") {
  Fixture f;
  SECTION("deterministic batches; the last ones get only what is left") {
    for (long budget : {3000L, 1000L, 777L}) {
      TempDir dir;
      auto t = run_tune_job(f.problem(), deterministic(dir.path(), budget)).value();
      INFO(budget);
      CHECK(t.evaluations == budget);
      CHECK(episode_evaluations(dir.path(), t.job_id) == budget);  // the heuristics are episode 0
      CHECK(t.stop_reason == "evaluation budget used");
    }
  }
  SECTION("threaded rollouts with time-sized batches") {
    TempDir dir;
    TuneOptions o;
    o.data_dir = dir.path();
    o.rollouts = 3;
    o.budget_seconds = 0;
    o.budget_evaluations = 1000;
    o.batch_seconds = 0.05;
    auto t = run_tune_job(f.problem(), o).value();
    CHECK(t.evaluations == 1000);
    CHECK(episode_evaluations(dir.path(), t.job_id) == 1000);  // the heuristics are episode 0
  }
  SECTION("a budget the heuristics use up runs no batch") {
    TempDir dir;
    auto t = run_tune_job(f.problem(), deterministic(dir.path(), 5)).value();
    CHECK(t.batches == 0);
    CHECK(t.evaluations == t.heuristic_evaluations);
    CHECK(t.stop_reason == "evaluation budget used by the heuristics");
  }
}

TEST_CASE("a job stopped by --patience says so", "[actors]") {
  Fixture f;
  TempDir dir;
  TuneOptions o = deterministic(dir.path(), 1000000);
  o.patience_seconds = 1e-9;  // any batch is longer than that
  auto t = run_tune_job(f.problem(), o).value();
  CHECK(t.state == JobState::complete);
  CHECK(t.evaluations < 1000000);
  CHECK_THAT(t.stop_reason, Catch::Contains("--patience"));
  CHECK_THAT(stored_job(dir.path(), t.job_id).message, Catch::Contains("--patience") && !Catch::Contains("budget"));
}

TEST_CASE("a store failure ends the job FAILED with its best kept", "[actors]") {
  Fixture f;
  TempDir dir;
  TuneOptions o = deterministic(dir.path());
  o.faults.store_puts = 1000;
  auto t = run_tune_job(f.problem(), o).value();
  CHECK(t.state == JobState::failed);
  CHECK_THAT(t.stop_reason, Catch::Contains("storing the best failed") && Catch::Contains("injected fault"));
  CHECK(t.best.placement.size() == f.graph.size());
  CHECK(t.best.makespan == f.simulate(t.best.placement));
  CHECK(t.best.makespan <= t.heuristic_makespan);
  CHECK(t.evaluations < 3000);  // it stopped at the first failure
  const JobRecord job = stored_job(dir.path(), t.job_id);
  CHECK(job.state == JobState::failed);
  CHECK_THAT(job.message, Catch::Contains("storing the best failed"));
}

TEST_CASE("a batch that fails on its worker runs again; nothing is lost or counted twice", "[actors]") {
  Fixture f;
  TempDir dir;
  TuneOptions o = deterministic(dir.path(), 3000);
  o.faults.batch = 3;
  o.faults.batch_times = 2;  // fails twice, the third attempt runs
  auto t = run_tune_job(f.problem(), o).value();
  CHECK(t.state == JobState::complete);
  CHECK(t.evaluations == 3000);
  CHECK(episode_evaluations(dir.path(), t.job_id) == 3000);  // the heuristics are episode 0
  auto store = Store::open_read_only(dir.path()).value();
  auto episodes = store->episodes(t.job_id).value();
  CHECK(std::any_of(episodes.begin(), episodes.end(), [](const EpisodeRecord& e) { return e.sequence == 3; }));
}

TEST_CASE("a batch that keeps failing ends the job FAILED with its best kept", "[actors]") {
  Fixture f;
  TempDir dir;
  TuneOptions o = deterministic(dir.path());
  o.faults.batch = 3;
  o.faults.batch_times = 3;  // the pool's limit of attempts
  auto t = run_tune_job(f.problem(), o).value();
  CHECK(t.state == JobState::failed);
  CHECK_THAT(t.stop_reason, Catch::Contains("anneal task 3 failed 3 times") && Catch::Contains("injected fault in batch 3"));
  CHECK(t.best.makespan == f.simulate(t.best.placement));
  CHECK(t.best.makespan <= t.heuristic_makespan);
  CHECK(stored_job(dir.path(), t.job_id).state == JobState::failed);
  auto store = Store::open_read_only(dir.path()).value();  // what it found before is stored
  auto best = store->best(fingerprint(f.graph), runtime_fingerprint(f.cluster, f.sim)).value();
  REQUIRE(best.has_value());
  CHECK(best->makespan >= t.best.makespan);
}

TEST_CASE("a corrupted table file ends the job FAILED, not COMPLETE", "[actors]") {
  Fixture f;
  TempDir dir;
  REQUIRE(run_tune_job(f.problem(), deterministic(dir.path(), 500)).ok());
  testing::flush_all(dir.path());
  const auto files = testing::table_files(dir.path(), "schedules");
  REQUIRE(files.size() == 1);
  {
    std::fstream file(files.front(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(20);
    file.write("\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
  }
  auto t = run_tune_job(f.problem(), deterministic(dir.path(), 500));
  REQUIRE(t.ok());
  CHECK(t.value().state == JobState::failed);
  CHECK_THAT(t.value().stop_reason, Catch::Contains("Corruption"));
  CHECK(t.value().best.makespan == f.simulate(t.value().best.placement));
}

TEST_CASE("rollouts are capped, and a thread that cannot start is an error, not a hang", "[actors]") {
  Fixture f;
  TempDir dir;
  TuneOptions o;
  o.data_dir = dir.path();
  o.budget_seconds = 0.2;
  o.rollouts = max_rollouts() + 1;
  auto too_many = run_tune_job(f.problem(), o);
  REQUIRE_FALSE(too_many.ok());
  CHECK_THAT(too_many.error().message, Catch::Contains("--rollouts") && Catch::Contains(std::to_string(max_rollouts())));
  CHECK(max_rollouts() <= 256);
  o.rollouts = 4;
  o.faults.spawn = 2;
  auto failed = run_tune_job(f.problem(), o);  // threaded: a hang would never return
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.error().message, Catch::Contains("cannot start rollout 2 of 4"));
}

TEST_CASE("after a job was killed, it shows INTERRUPTED and the next one resumes from its best", "[actors]") {
  Fixture f;
  TempDir dir;
  // What a killed job leaves: its last stored best and a RUNNING record whose process is gone.
  Placement placement;
  for (int op = 0; op < f.graph.size(); ++op) placement.device.push_back(op % 4);
  const double makespan = f.simulate(placement);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  {
    auto store = Store::open(dir.path()).value();
    ScheduleRecord r;
    r.graph = fingerprint(f.graph);
    r.cluster = runtime_fingerprint(f.cluster, f.sim);
    r.method = "search";
    r.makespan = makespan;
    r.placement = placement;
    r.model_version = kModelVersion;
    REQUIRE(store->put_if_better(r).value());
    JobRecord killed;
    killed.id = "killed";
    killed.owner_pid = child;
    killed.owner_host = host_name();
    REQUIRE(store->put_job(killed).ok());
  }
  CHECK(stored_job(dir.path(), "killed").state == JobState::interrupted);
  auto t = run_tune_job(f.problem(), deterministic(dir.path(), 500)).value();
  CHECK(t.resumed);
  CHECK(t.resumed_makespan == makespan);
  CHECK(t.best.makespan <= makespan);
  CHECK(stored_job(dir.path(), "killed").state == JobState::interrupted);
  CHECK(stored_job(dir.path(), t.job_id).state == JobState::complete);
}

TEST_CASE("the store actor's WAL sync keeps running after a failed sync", "[actors]") {
  TempDir dir;
  std::shared_ptr<Store> store = Store::open(dir.path()).value();
  store->inject_faults({1, 0});
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("testing"));
  cfg.set("logger.inline-output", true);
  caf::actor_system system{cfg};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(system.scheduler());
  caf::actor actor = system.spawn(store_actor, store);
  caf::anon_send(actor, put_episode_atom::value, EpisodeRecord{"job", 1, 0, 10, 1, 1, 0});
  sched.run();
  CHECK(sched.advance_time(std::chrono::seconds(1)) == 1);  // the timer fires: the sync fails
  sched.run();
  CHECK(store->wal_syncs() == 0);
  CHECK(sched.advance_time(std::chrono::seconds(1)) == 1);  // re-armed: this one succeeds
  sched.run();
  CHECK(store->wal_syncs() == 1);
  CHECK(sched.advance_time(std::chrono::seconds(1)) == 0);  // clean again: no timer left
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  system.clock().cancel_all();
  sched.run();
}

namespace {

// The next task the pool leases to a scripted worker (a test actor standing for its link).
wire::Assign next_assign(caf::scoped_actor& worker) {
  wire::Assign assign;
  bool assigned = false;
  for (int i = 0; i < 50 && !assigned; ++i)
    worker->receive(
        [&](net_out_atom, const wire::Envelope& e) {
          if (e.type != wire::Type::assign) return;  // heartbeats, the problem's content
          assign = wire::decode<wire::Assign>(e.payload).value();
          assigned = true;
        },
        caf::after(std::chrono::seconds(10)) >> [&] { i = 50; });
  REQUIRE(assigned);
  return assign;
}

wire::Envelope scripted_hello(const std::string& name) {
  return wire::Envelope{name, wire::Type::hello, wire::encode(wire::Hello{name, "test-host", 1, 1, {"place", "anneal"}})};
}

wire::Envelope scripted_done(const std::string& name, const wire::Assign& assign, std::string body) {
  TaskResult answer;
  answer.sequence = assign.task.sequence;
  answer.body = std::move(body);
  answer.worker = name;
  return wire::Envelope{name, wire::Type::done, wire::encode(wire::Done{assign.lease, answer})};
}

// Round robin over 4 devices, with the makespan it has or the one given.
PlacementOutcome round_robin(const Fixture& f, double makespan = -1) {
  PlacementOutcome out;
  out.method = "round-robin";
  out.placement = Placement{std::vector<std::int32_t>(f.graph.size()), {}};
  for (int op = 0; op < f.graph.size(); ++op) out.placement.device[op] = op % 4;
  out.makespan = makespan >= 0 ? makespan : f.simulate(out.placement);
  out.evaluations = 1;
  return out;
}

// A coordinator node on a fresh store whose pool ends leases only by the test's messages; the
// test's actors play its worker and client.
struct ScriptedCluster {
  std::function<void()> before_build;  // the coordinator's test hook
  std::function<void(Store&)> before_start;  // what the store holds when the coordinator starts
  TempDir dir;
  Fixture f;
  std::shared_ptr<Store> store = Store::open(dir.path()).value();
  caf::actor_system_config cfg = [] {
    caf::actor_system_config c;
    configure_message_scheduler(c);
    return c;
  }();
  caf::actor_system system{cfg};
  CoordinatorNode node = [this] {
    if (before_start) before_start(*store);
    CoordinatorNodeOptions options;
    options.pool.timers = false;
    options.coordinator.before_build = before_build;
    options.coordinator.submit_keys = true;  // as a served coordinator
    return start_coordinator_node(system, store, options).value();
  }();
  caf::scoped_actor worker{system}, client{system};

  explicit ScriptedCluster(std::function<void()> hook = {}, std::function<void(Store&)> start = {})
      : before_build(std::move(hook)), before_start(std::move(start)) {
    worker->send(node.pool, net_in_atom::value, scripted_hello("w"));
  }

  // Submits the fixture's tuning job with an evaluation budget; its id.
  std::string submit(long evaluations) {
    std::string id;
    client->request(node.coordinator, std::chrono::seconds(10), submit_atom::value,
                    make_job_spec(f.problem(), deterministic(dir.path(), evaluations)), JobHooks{})
        .receive([&](const std::string& job) { id = job; }, [&](const caf::error& e) { FAIL(system.render(e)); });
    return id;
  }
};


// Scripted workers w1, w2, w3 in turn take the job's heuristics and claim a makespan ten times
// better than their placement has, as faulty workers or ones of another simulator version would:
// each is refused and gets no more tasks, and the third ends the job.
void three_false_claims(ScriptedCluster& c) {
  const double real = round_robin(c.f).makespan;
  for (const std::string name : {"w1", "w2", "w3"}) {
    c.worker->send(c.node.pool, net_in_atom::value, scripted_hello(name));
    const wire::Assign assign = next_assign(c.worker);
    c.worker->send(c.node.pool, net_in_atom::value, scripted_done(name, assign, encode_body(round_robin(c.f, real / 10))));
  }
}

// The pool's view of one worker, by name.
PoolStatus::Worker pool_worker(ScriptedCluster& c, const std::string& name) {
  PoolStatus status;
  c.client->request(c.node.pool, std::chrono::seconds(10), status_atom::value)
      .receive([&](const PoolStatus& s) { status = s; }, [&](const caf::error& e) { FAIL(c.system.render(e)); });
  for (const PoolStatus::Worker& w : status.workers)
    if (w.name == name) return w;
  FAIL("no worker " + name);
  return {};
}

// Why the pool distrusts a worker, once it does (the job tells it after checking an answer): "" if
// it still trusts it after 5 s.
std::string distrust_of(ScriptedCluster& c, const std::string& name) {
  for (int i = 0; i < 500; ++i) {
    const std::string why = pool_worker(c, name).distrusted;
    if (!why.empty()) return why;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

}  // namespace

TEST_CASE("a worker's claimed best is simulated again: a makespan its placement does not have is refused, its worker gets no "
          "more tasks, and the job goes on with another",
          "[actors]") {
  using namespace std::chrono_literals;
  ScriptedCluster c;  // its worker "w" never says hello again: only the workers below serve
  c.worker->send(c.node.pool, net_in_atom::value, wire::Envelope{"w", wire::Type::bye, wire::encode_empty()});
  const std::string id = c.submit(1000);
  const double real = round_robin(c.f).makespan;
  c.worker->send(c.node.pool, net_in_atom::value, scripted_hello("liar"));
  const wire::Assign lie = next_assign(c.worker);
  c.worker->send(c.node.pool, net_in_atom::value, scripted_done("liar", lie, encode_body(round_robin(c.f, real / 10))));
  CHECK_THAT(distrust_of(c, "liar"), Catch::Contains("claims a makespan of") && Catch::Contains("another simulator version"));
  // The heuristics run again, on the next worker, whose true answer the job takes.
  c.worker->send(c.node.pool, net_in_atom::value, scripted_hello("honest"));
  const wire::Assign again = next_assign(c.worker);
  CHECK(again.task.kind == "place");
  c.worker->send(c.node.pool, net_in_atom::value, scripted_done("honest", again, encode_body(round_robin(c.f))));
  (void)next_assign(c.worker);  // the search's first batch, to the honest worker: the job runs on
  CHECK(pool_worker(c, "honest").distrusted.empty());
  std::string cancelled;
  c.client->request(c.node.coordinator, 10s, cancel_atom::value, id)
      .receive([&](const std::string& text) { cancelled = text; }, [&](const caf::error& e) { FAIL(c.system.render(e)); });
  // The honest worker leaves with its batch leased (this pool's leases do not expire): the batch
  // comes back unrun and the cancelled job ends.
  c.worker->send(c.node.pool, net_in_atom::value, wire::Envelope{"honest", wire::Type::bye, wire::encode_empty()});
  TuneOutcome outcome;
  c.client->request(c.node.coordinator, 30s, await_atom::value, id)
      .receive([&](const TuneOutcome& o) { outcome = o; }, [&](const caf::error& e) { FAIL(c.system.render(e)); });
  CHECK(outcome.state == JobState::cancelled);
  CHECK(outcome.best.makespan == Approx(real));
  c.node.shutdown(c.system);
  const auto stored = c.store->best(outcome.graph, outcome.runtime).value();
  REQUIRE(stored.has_value());
  CHECK(stored->makespan == Approx(real));
}

TEST_CASE("the third worker whose answer fails its checks ends the job FAILED, its false claims unstored", "[actors]") {
  using namespace std::chrono_literals;
  ScriptedCluster c;
  c.worker->send(c.node.pool, net_in_atom::value, wire::Envelope{"w", wire::Type::bye, wire::encode_empty()});
  const std::string id = c.submit(1000);
  three_false_claims(c);
  TuneOutcome outcome;
  c.client->request(c.node.coordinator, 30s, await_atom::value, id)
      .receive([&](const TuneOutcome& o) { outcome = o; }, [&](const caf::error& e) { FAIL(c.system.render(e)); });
  CHECK(outcome.state == JobState::failed);
  CHECK_THAT(outcome.stop_reason, Catch::Contains("claims a makespan of") && Catch::Contains("(answers of 3 workers failed their checks)"));
  CHECK_FALSE(outcome.best.makespan == Approx(round_robin(c.f).makespan / 10));
  c.node.shutdown(c.system);
  CHECK_FALSE(c.store->best(outcome.graph, outcome.runtime).value().has_value());
}

TEST_CASE("an await or cancel that comes while a job's end is being recorded gets the job's outcome or is told", "[actors]") {
  // The job fails on three workers' false claims (as above); while its FAILED record is being stored
  // (held in the store's hook) a client awaits it. The coordinator no longer runs it and has not
  // recorded its end: it must wait for the end, not answer that there is no such job.
  using namespace std::chrono_literals;
  ScriptedCluster c;
  caf::scoped_actor awaiter{c.system};
  caf::scoped_actor* sender = &awaiter;
  const caf::actor coordinator = c.node.coordinator;
  bool hooked = false;
  c.store->on_job_stored([sender, coordinator, &hooked](const JobRecord& record) {
    if (hooked || record.state != JobState::failed) return;
    hooked = true;
    (*sender)->send(coordinator, await_atom::value, record.id);  // handled before the store's reply
    (*sender)->send(coordinator, cancel_atom::value, record.id);
    std::this_thread::sleep_for(200ms);
  });
  c.worker->send(c.node.pool, net_in_atom::value, wire::Envelope{"w", wire::Type::bye, wire::encode_empty()});
  const std::string id = c.submit(1000);
  three_false_claims(c);
  std::string answer = "no answer", cancelled = "no answer";
  for (int i = 0; i < 2; ++i)
    awaiter->receive([&](const TuneOutcome& o) { answer = std::string("outcome ") + to_string(o.state); },
                     [&](const std::string& text) { cancelled = text; },
                     [&](const caf::error& e) { answer = c.system.render(e); }, caf::after(30s) >> [] {});
  c.store->on_job_stored({});
  CHECK(hooked);
  CHECK(answer == "outcome FAILED");
  CHECK_THAT(cancelled, Catch::Contains("is ending"));  // a cancel meanwhile is told so
  c.node.shutdown(c.system);
}

TEST_CASE("a cancelled job whose leased batch is queued again after the cancel still ends", "[actors]") {
  // The job's one batch is leased to a scripted worker when the job is cancelled; the pool takes
  // back what is queued, not what is leased. Then the worker is lost and its batch queued again,
  // with no worker left to run it: the tuner must take it back too, not wait for it forever.
  using namespace std::chrono_literals;
  ScriptedCluster c;
  Fixture& f = c.f;
  caf::actor_system& system = c.system;
  CoordinatorNode& node = c.node;
  caf::scoped_actor &worker = c.worker, &client = c.client;
  const std::string id = c.submit(100000);
  const wire::Assign heuristics = next_assign(worker);
  worker->send(node.pool, net_in_atom::value, scripted_done("w", heuristics, encode_body(round_robin(f))));
  const wire::Assign batch = next_assign(worker);  // held: never answered
  CHECK(batch.task.kind == "anneal");
  client->request(node.coordinator, 10s, cancel_atom::value, id).receive([](const std::string&) {}, [&](const caf::error& e) { FAIL(system.render(e)); });
  std::this_thread::sleep_for(300ms);  // the cancel's withdrawal has passed
  worker->send(node.pool, lost_atom::value, std::string("w"));
  TuneOutcome outcome;
  bool ended = false;
  client->request(node.coordinator, 10s, await_atom::value, id)
      .receive([&](const TuneOutcome& o) { outcome = o; ended = true; }, [&](const caf::error& e) { FAIL(system.render(e)); });
  REQUIRE(ended);
  CHECK(outcome.state == JobState::cancelled);
  CHECK(outcome.best.makespan == Approx(round_robin(f).makespan));
  node.shutdown(system);
}

namespace {

// A client's request as it comes from the wire (through a gateway, here the test's actor).
void send_from_client(ScriptedCluster& c, wire::Type type, std::uint64_t request_id, const std::string& key = "") {
  wire::Request request;
  request.id = request_id;
  request.key = key;
  if (type == wire::Type::submit) request.spec = make_job_spec(c.f.problem(), deterministic(c.dir.path(), 1000));
  c.client->send(c.node.coordinator, net_in_atom::value, wire::Envelope{"client", type, wire::encode(request)});
}

// The coordinator's next reply to the client.
wire::Reply reply_to_client(ScriptedCluster& c, std::uint64_t request_id) {
  wire::Reply reply;
  bool replied = false;
  c.client->receive(
      [&](net_out_atom, const wire::Envelope& e) {
        REQUIRE(e.type == wire::Type::reply);
        CHECK(e.peer == "client");
        reply = wire::decode<wire::Reply>(e.payload).value();
        replied = true;
      },
      caf::after(std::chrono::seconds(10)) >> [] {});
  REQUIRE(replied);
  CHECK(reply.id == request_id);
  return reply;
}

wire::Reply submit_from_client(ScriptedCluster& c, std::uint64_t request_id, const std::string& key = "") {
  send_from_client(c, wire::Type::submit, request_id, key);
  return reply_to_client(c, request_id);
}

std::string job_of(const wire::Reply& reply) {
  REQUIRE(reply.ok);
  return nlohmann::json::parse(reply.data).at("job").get<std::string>();
}

}  // namespace

TEST_CASE("a client's job is acknowledged only once its record is stored; one the store cannot record is refused",
          "[actors]") {
  ScriptedCluster c;
  SECTION("recording fails: refused, not run, not listed") {
    c.store->inject_faults({0, 0, 1});
    const wire::Reply refused = submit_from_client(c, 7);
    CHECK_FALSE(refused.ok);
    CHECK_THAT(refused.error, Catch::Contains("not accepted") && Catch::Contains("injected fault"));
    CHECK(c.store->jobs().value().empty());
    // Nothing was queued: the scripted worker is offered no task.
    bool offered = false, waiting = true;
    for (int i = 0; i < 20 && waiting; ++i)
      c.worker->receive([&](net_out_atom, const wire::Envelope& e) { offered = offered || e.type == wire::Type::assign; },
                        caf::after(std::chrono::milliseconds(500)) >> [&] { waiting = false; });
    CHECK_FALSE(offered);
  }
  SECTION("recorded: the acknowledged job is in the store when the client hears of it") {
    const wire::Reply accepted = submit_from_client(c, 8);
    REQUIRE(accepted.ok);
    const std::string id = nlohmann::json::parse(accepted.data).at("job").get<std::string>();
    auto stored = c.store->job(id).value();
    REQUIRE(stored.has_value());
    CHECK_FALSE(stored->spec.empty());  // durable: a restarted coordinator can run it again
  }
  c.node.shutdown(c.system);
}

TEST_CASE("a job cancelled once its record is listed, before it is queued, does not run", "[actors]") {
  // `gantry jobs` lists a client's job as soon as its QUEUED record is stored; a cancel that came
  // before the coordinator had the store's answer found no job ("no job ... in this coordinator")
  // and the job ran. The store's hook sends the cancel in that gap and waits until the coordinator
  // has taken it (a later request of the same sender is answered); the cancel itself is answered
  // once the job's CANCELLED record is stored, after the hook.
  ScriptedCluster c;
  caf::scoped_actor canceller{c.system};  // used by the hook, then by this thread
  std::string cancelled_id;
  bool hooked = false;
  caf::scoped_actor* sender = &canceller;
  const caf::actor coordinator = c.node.coordinator;
  c.store->on_job_stored([sender, coordinator, &cancelled_id, &hooked](const JobRecord& record) {
    if (hooked || record.state != JobState::queued) return;
    hooked = true;
    cancelled_id = record.id;
    (*sender)->send(coordinator, cancel_atom::value, record.id);
    (*sender)->request(coordinator, std::chrono::seconds(10), await_atom::value, std::string("no-such-job"))
        .receive([](const TuneOutcome&) {}, [](const caf::error&) {});  // the cancel was taken before this
  });
  const wire::Reply accepted = submit_from_client(c, 30);
  REQUIRE(accepted.ok);
  REQUIRE(hooked);
  CHECK(nlohmann::json::parse(accepted.data).at("job").get<std::string>() == cancelled_id);
  std::string answer;
  canceller->receive([&](const std::string& text) { answer = text; }, [&](const caf::error& e) { answer = c.system.render(e); },
                     caf::after(std::chrono::seconds(10)) >> [&] { answer = "no answer"; });
  // The cancel is answered once the CANCELLED record is stored: the store no longer uses the hook.
  c.store->on_job_stored({});
  CHECK_THAT(answer, Catch::Contains("cancelled (it had not started)"));
  // Answered once its CANCELLED record is stored, and not run: the scripted worker is offered no task.
  auto stored = c.store->job(cancelled_id).value();
  REQUIRE(stored.has_value());
  CHECK(stored->state == JobState::cancelled);
  bool offered = false, waiting = true;
  for (int i = 0; i < 20 && waiting; ++i)
    c.worker->receive([&](net_out_atom, const wire::Envelope& e) { offered = offered || e.type == wire::Type::assign; },
                      caf::after(std::chrono::milliseconds(300)) >> [&] { waiting = false; });
  CHECK_FALSE(offered);
  c.node.shutdown(c.system);
}

TEST_CASE("the coordinator answers clients while a submitted job's problem is being built", "[actors]") {
  // The build is held by the test until another client request has been answered: built in the
  // coordinator's turn (before), a large graph's minute-long build stalled every actor of the node.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> building{false};
  ScriptedCluster c([&building, released] {
    building = true;
    released.wait();
  });
  gantry::testing::ReleaseOnExit guard{release};
  send_from_client(c, wire::Type::submit, 20);
  for (int i = 0; i < 1000 && !building; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(building);
  send_from_client(c, wire::Type::jobs, 21);
  const wire::Reply listing = reply_to_client(c, 21);  // answered while the build waits
  CHECK(listing.ok);
  guard.now();
  const wire::Reply accepted = reply_to_client(c, 20);
  CHECK(accepted.ok);
  c.node.shutdown(c.system);
}

TEST_CASE("a submit sent again with its key is answered with its job, also after a restart; the job runs once",
          "[actors]") {
  SECTION("after its job was recorded, and while it is being recorded") {
    std::atomic<int> builds{0};
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    ScriptedCluster c([&builds, released] {
      if (builds++ == 1) released.wait();  // the second key's build waits: its retry comes meanwhile
    });
    gantry::testing::ReleaseOnExit guard{release};
    const std::string first = job_of(submit_from_client(c, 1, "key-a"));
    CHECK(job_of(submit_from_client(c, 2, "key-a")) == first);
    send_from_client(c, wire::Type::submit, 3, "key-b");
    for (int i = 0; i < 1000 && builds < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    send_from_client(c, wire::Type::submit, 4, "key-b");  // its first submit is still being built
    guard.now();
    const std::string second = job_of(reply_to_client(c, 3));
    CHECK(job_of(reply_to_client(c, 4)) == second);
    CHECK(second != first);
    CHECK(builds == 2);  // one build per key: the retries made no job
    CHECK(c.store->jobs().value().size() == 2);
    const std::string unkeyed = job_of(submit_from_client(c, 5));  // without a key, every submit is a job
    CHECK(unkeyed != first);
    CHECK(c.store->jobs().value().size() == 3);
    c.node.shutdown(c.system);
  }
  SECTION("a coordinator started on a store that holds the job answers with it") {
    JobRecord stored;
    stored.id = "job-before-restart";
    stored.state = JobState::complete;
    stored.submit_key = "key-c";
    ScriptedCluster c({}, [&](Store& store) { REQUIRE(store.put_job(stored)); });
    CHECK(job_of(submit_from_client(c, 6, "key-c")) == "job-before-restart");
    CHECK(c.store->jobs().value().size() == 1);
    c.node.shutdown(c.system);
  }
}

TEST_CASE("a restarted coordinator reads the specs of its interrupted jobs only: an ended job's damaged spec stops none; an old spec's long batch is shortened",
          "[actors]") {
  Fixture f;
  TempDir dir;
  pid_t child = fork();  // the killed coordinator: a process that is gone
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  TuneOptions o = deterministic(dir.path(), 500);
  o.deterministic = false;
  JobSpec stored = make_job_spec(f.problem(), o);
  stored.batch_evaluations = 0;
  stored.batch_seconds = 100;  // stored before batches were limited to 60 s: still resumed
  const std::string spec = wire::job_spec_text(stored);
  {
    auto store = Store::open(dir.path()).value();
    JobRecord ended;
    ended.id = "ended";
    ended.kind = "tune";
    ended.state = JobState::complete;
    ended.spec = spec;
    REQUIRE(store->put_job(ended));
    JobRecord killed = ended;
    killed.id = "killed";
    killed.state = JobState::running;
    killed.owner_pid = child;
    killed.owner_host = host_name();
    REQUIRE(store->put_job(killed));
  }
  gantry::testing::with_raw_db(dir.path(), [](rocksdb::DB& db, std::vector<rocksdb::ColumnFamilyHandle*>& families) {
    for (auto* family : families)
      if (family->GetName() == "job_specs") REQUIRE(db.Put(rocksdb::WriteOptions(), family, "ended", "not a record").ok());
  });
  std::shared_ptr<Store> store = Store::open(dir.path()).value();
  REQUIRE_FALSE(store->jobs(/*with_specs=*/true).ok());  // the damage is there: a listing with specs fails
  caf::actor_system_config cfg;
  configure_message_scheduler(cfg);
  caf::actor_system system{cfg};
  ProblemCache cache;
  CoordinatorNodeOptions options;
  options.coordinator.cache = &cache;
  options.coordinator.recover = true;
  options.coordinator.submit_keys = true;
  const CoordinatorNode node = start_coordinator_node(system, store, options).value();
  WorkerNodeOptions w;
  w.worker.name = "w";
  w.worker.slots = 2;
  w.pool = node.pool;
  const WorkerNode worker = start_worker_node(system, w, &cache).value();
  const auto state = [&] { return store->job("killed").value()->state; };
  for (int i = 0; i < 600 && state() != JobState::complete; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(state() == JobState::complete);
  CHECK(store->job("killed").value()->evaluations == 500);
  const std::vector<JobRecord> listed = store->jobs().value();  // without specs: the ended job is as it was
  for (const JobRecord& job : listed)
    if (job.id == "ended") CHECK(job.state == JobState::complete);
  worker.shutdown(system);
  node.shutdown(system);
}

TEST_CASE("a batch is never longer than what the time budget has left", "[actors]") {
  // A running batch runs to its end on its worker: a 50 s batch under a 20 s budget ran the job
  // 50 s (and kept a cancel waiting as long).
  using namespace std::chrono_literals;
  ScriptedCluster c;
  JobSpec spec = make_job_spec(c.f.problem(), deterministic(c.dir.path()));
  spec.budget_seconds = 20;
  spec.budget_evaluations = 0;
  spec.batch_seconds = 50;
  spec.batch_evaluations = 0;
  std::string id;
  c.client->request(c.node.coordinator, 10s, submit_atom::value, spec, JobHooks{})
      .receive([&](const std::string& job) { id = job; }, [&](const caf::error& e) { FAIL(c.system.render(e)); });
  const wire::Assign heuristics = next_assign(c.worker);
  REQUIRE(heuristics.task.kind != std::string(kAnnealTask));
  c.worker->send(c.node.pool, net_in_atom::value, scripted_done("w", heuristics, encode_body(round_robin(c.f))));
  const wire::Assign batch = next_assign(c.worker);
  CHECK(batch.task.kind == std::string(kAnnealTask));
  CHECK(batch.task.seconds > 0);
  CHECK(batch.task.seconds <= 20);
  c.client->request(c.node.coordinator, 10s, cancel_atom::value, id).receive([](const std::string&) {}, [](const caf::error&) {});
  c.node.shutdown(c.system);
}

TEST_CASE("a job spec's budget and batch must be finite: NaN passed every check, infinity never ended", "[actors]") {
  Fixture f;
  TempDir dir;
  const JobSpec good = make_job_spec(f.problem(), deterministic(dir.path(), 500));
  REQUIRE(coordinator_detail::check_spec(good).ok());
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0}) {
    JobSpec spec = good;
    spec.budget_seconds = bad;
    const Status ok = coordinator_detail::check_spec(spec);
    INFO(bad);
    REQUIRE_FALSE(ok.ok());
    CHECK_THAT(ok.error().message, Catch::StartsWith("budget_seconds ") && Catch::Contains("must be a finite number >= 0"));
  }
  JobSpec batch = good;
  batch.kind = "train";  // timed batches of other kinds have no 60 s limit, which caught NaN for tune
  batch.batch_seconds = std::nan("");
  const Status ok = coordinator_detail::check_spec(batch);
  REQUIRE_FALSE(ok.ok());
  CHECK_THAT(ok.error().message, Catch::StartsWith("batch_seconds nan s: must be a finite number"));
}

TEST_CASE("a job spec's patience, batch size and parallelism are bounded", "[actors]") {
  Fixture f;
  TempDir dir;
  const JobSpec good = make_job_spec(f.problem(), deterministic(dir.path(), 500));
  const auto refusal = [](const JobSpec& spec) {
    const Status ok = coordinator_detail::check_spec(spec);
    return ok.ok() ? std::string("accepted") : ok.error().message;
  };
  JobSpec patience = good;
  patience.patience_seconds = -5;  // read as "no patience" before
  CHECK_THAT(refusal(patience), Catch::StartsWith("patience_seconds -5 s: must be a finite number >= 0"));
  JobSpec batch = good;
  batch.batch_evaluations = 1L << 62;  // no worker finishes it: leased and lost again and again
  CHECK_THAT(refusal(batch), Catch::StartsWith("batch_evaluations 4611686018427387904: at most 100000000"));
  batch.batch_evaluations = 100'000'000;
  CHECK(refusal(batch) == "accepted");
  JobSpec wide = good;
  wide.parallelism = (1 << 30);  // with no worker yet, the tuner queued that many batches
  CHECK_THAT(refusal(wide), Catch::StartsWith("parallelism 1073741824: must be 0 (every slot) to 65536"));
  wide.parallelism = 65'536;
  CHECK(refusal(wide) == "accepted");
}
