// The rollout pool's leases, seen from the wire: test actors play the workers (hello, done) and a
// job (run_task). A task whose worker is lost or whose lease expires runs again elsewhere; the
// asker hears exactly one result; a late answer on an old lease is dropped as stale.
#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <algorithm>
#include <thread>

#include "actors/messages.hpp"
#include "actors/rollout_pool.hpp"
#include "tests/support/stderr_to_file.hpp"
#include "tests/support/temp_dir.hpp"

using namespace gantry;

namespace {

using namespace std::chrono_literals;

wire::Envelope hello(const std::string& peer, std::vector<std::string> kinds = {"anneal", "place"}, int slots = 1, long pid = 1) {
  return {peer, wire::Type::hello, wire::encode(wire::Hello{peer, "test-host", pid, slots, std::move(kinds)})};
}

RolloutTask task(long sequence, const std::string& kind = "anneal") {
  RolloutTask t;
  t.kind = kind;
  t.sequence = sequence;
  t.body = "opaque to the pool";
  return t;
}

// What a worker's link receives next: an assign for it.
wire::Assign next_assign(caf::scoped_actor& link, const std::string& peer) {
  wire::Assign out;
  bool got = false;
  for (int i = 0; i < 100 && !got; ++i)
    link->receive(
        [&](net_out_atom, const wire::Envelope& e) {
          if (e.type != wire::Type::assign) return;  // heartbeats
          CHECK(e.peer == peer);
          out = wire::decode<wire::Assign>(e.payload).value();
          got = true;
        },
        caf::after(5s) >> [&] { i = 100; });
  REQUIRE(got);
  return out;
}

wire::Envelope done(const std::string& peer, const wire::Assign& a, const std::string& body) {
  TaskResult r;
  r.sequence = a.task.sequence;
  r.body = body;
  r.worker = peer;
  return {peer, wire::Type::done, wire::encode(wire::Done{a.lease, r})};
}

// An actor system with a pool, ended when the test ends, also when a REQUIRE fails (else the actor
// system waits for the pool).
struct PoolFixture {
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  caf::actor pool;
  explicit PoolFixture(PoolOptions options) : pool(spawn_rollout_pool(system, options)) {}
  ~PoolFixture() { caf::anon_send_exit(pool, caf::exit_reason::user_shutdown); }
};

// A pool whose timers are off: leases end only by the test's messages.
PoolOptions timerless() {
  PoolOptions options;
  options.timers = false;
  return options;
}

PoolStatus status(caf::scoped_actor& self, const caf::actor& pool) {
  PoolStatus out;
  self->request(pool, 5s, status_atom::value).receive([&](const PoolStatus& s) { out = s; }, [&](const caf::error&) { FAIL("no status"); });
  return out;
}

}  // namespace

TEST_CASE("a lost worker's lease runs again on another worker; its late answer is stale", "[actors]") {
  PoolFixture f(timerless());
  caf::actor_system& system = f.system;
  const caf::actor& pool = f.pool;
  caf::scoped_actor a{system}, b{system}, job{system};
  a->send(pool, net_in_atom::value, hello("a"));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(7));
  const wire::Assign first = next_assign(a, "a");
  CHECK(first.task.sequence == 7);
  a->send(pool, lost_atom::value, std::string("a"));        // the transport says a is gone
  b->send(pool, net_in_atom::value, hello("b"));
  const wire::Assign second = next_assign(b, "b");
  CHECK(second.task.sequence == 7);
  CHECK(second.lease != first.lease);
  b->send(pool, net_in_atom::value, done("b", second, "b's answer"));
  a->send(pool, net_in_atom::value, done("a", first, "a's answer"));  // too late: the task already counted
  int results = 0;
  for (bool more = true; more;)
    job->receive([&](const TaskResult& r) {
                   ++results;
                   CHECK(r.worker == "b");
                   CHECK(r.body == "b's answer");
                 },
                 caf::after(300ms) >> [&] { more = false; });
  CHECK(results == 1);
  const PoolStatus s = status(job, pool);
  CHECK(s.committed == 1);
  CHECK(s.requeued == 1);
  CHECK(s.stale == 1);
  CHECK(s.leased == 0);
}

TEST_CASE("only the worker holding a lease can end it; the result names the worker as its hello did", "[actors]") {
  PoolFixture f(timerless());
  caf::scoped_actor a{f.system}, b{f.system}, job{f.system};
  a->send(f.pool, net_in_atom::value, hello("a"));
  b->send(f.pool, net_in_atom::value, hello("b", {"other"}));  // connected, runs none of the job's kinds
  job->send(f.pool, run_task_atom::value, std::string("job-1"), 0, task(5));
  const wire::Assign lease = next_assign(a, "a");
  wire::Envelope forged = done("b", lease, "forged");  // b answers a's lease, claiming to be a
  TaskResult claimed;
  claimed.sequence = lease.task.sequence;
  claimed.body = "forged";
  claimed.worker = "a";
  forged.payload = wire::encode(wire::Done{lease.lease, claimed});
  b->send(f.pool, net_in_atom::value, forged);
  CHECK(status(job, f.pool).stale == 1);
  wire::Envelope honest = done("a", lease, "a's answer");
  TaskResult renamed = wire::decode<wire::Done>(honest.payload).value().result;
  renamed.worker = "someone else";
  honest.payload = wire::encode(wire::Done{lease.lease, renamed});
  a->send(f.pool, net_in_atom::value, honest);
  job->receive(
      [&](const TaskResult& r) {
        CHECK(r.body == "a's answer");
        CHECK(r.worker == "a");
      },
      caf::after(5s) >> [] { FAIL("no result"); });
  const PoolStatus s = status(job, f.pool);
  CHECK(s.committed == 1);
  CHECK(s.stale == 1);
}

TEST_CASE("a worker restarted under its name gets its predecessor's leased task again at once", "[actors]") {
  PoolFixture f(timerless());  // no deadlines: only the restart can free the lease
  caf::scoped_actor a{f.system}, job{f.system};
  a->send(f.pool, net_in_atom::value, hello("a"));
  job->send(f.pool, run_task_atom::value, std::string("job-1"), 0, task(4));
  const wire::Assign first = next_assign(a, "a");
  a->send(f.pool, net_in_atom::value, hello("a", {"anneal", "place"}, 1, 2));  // process 2 now
  const wire::Assign second = next_assign(a, "a");
  CHECK(second.task.sequence == 4);
  CHECK(second.lease != first.lease);
  a->send(f.pool, net_in_atom::value, hello("a", {"anneal", "place"}, 1, 2));  // the same process again keeps its lease
  a->send(f.pool, net_in_atom::value, done("a", second, "answer"));
  job->receive([&](const TaskResult& r) { CHECK(r.body == "answer"); }, caf::after(5s) >> [] { FAIL("no result"); });
  const PoolStatus s = status(job, f.pool);
  CHECK(s.requeued == 1);
  CHECK(s.committed == 1);
  CHECK(s.stale == 0);
}

TEST_CASE("a task whose worker is lost on every attempt fails instead of taking down every worker", "[actors]") {
  PoolFixture f(timerless());  // max_attempts 3
  caf::scoped_actor job{f.system};
  job->send(f.pool, run_task_atom::value, std::string("job-1"), 0, task(9));
  for (const std::string name : {"a", "b", "c"}) {
    caf::scoped_actor w{f.system};
    w->send(f.pool, net_in_atom::value, hello(name));
    CHECK(next_assign(w, name).task.sequence == 9);
    w->send(f.pool, lost_atom::value, name);  // the task took its worker down
  }
  std::string failure;
  job->receive([&](const TaskResult&) { FAIL("a result"); }, [&](const caf::error& e) { failure = f.system.render(e); },
               caf::after(5s) >> [] { FAIL("no answer"); });
  CHECK_THAT(failure, Catch::Contains("failed 3 times") && Catch::Contains("the last time its worker c was lost"));
  CHECK(status(job, f.pool).requeued == 2);
}

TEST_CASE("a lease past its deadline runs again on another worker", "[actors]") {
  PoolOptions options;
  options.heartbeat_seconds = 0.1;
  options.lease_seconds = 0.3;  // plus the batch's own 0 s
  options.liveness = 1000;      // silence alone does not drop a worker here: only the deadline acts
  PoolFixture f(options);
  caf::actor_system& system = f.system;
  const caf::actor& pool = f.pool;
  caf::scoped_actor a{system}, b{system}, job{system};
  a->send(pool, net_in_atom::value, hello("a"));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(3));
  const wire::Assign first = next_assign(a, "a");
  b->send(pool, net_in_atom::value, hello("b"));
  // a holds the lease and says nothing: after 0.3 s the lease expires and goes to b.
  const wire::Assign second = next_assign(b, "b");
  CHECK(second.task.sequence == 3);
  CHECK(second.lease != first.lease);
  b->send(pool, net_in_atom::value, done("b", second, "x"));
  job->receive([&](const TaskResult& r) { CHECK(r.worker == "b"); }, caf::after(5s) >> [] { FAIL("no result"); });
  const PoolStatus s = status(job, pool);
  CHECK(s.requeued == 1);
  CHECK(s.workers.size() == 2);
  CHECK(s.committed == 1);
}

TEST_CASE("a withdrawn job's queued tasks come back unrun; higher priorities are leased first", "[actors]") {
  PoolFixture f(timerless());
  caf::actor_system& system = f.system;
  const caf::actor& pool = f.pool;
  caf::scoped_actor a{system}, job{system};
  job->send(pool, run_task_atom::value, std::string("low"), 0, task(1));
  job->send(pool, run_task_atom::value, std::string("other"), 0, task(3));
  job->send(pool, run_task_atom::value, std::string("high"), 5, task(2));
  a->send(pool, net_in_atom::value, hello("a"));  // one slot: the highest priority goes first
  const wire::Assign first = next_assign(a, "a");
  CHECK(first.task.sequence == 2);
  job->send(pool, withdraw_atom::value, std::string("low"));
  job->receive([&](const TaskResult& r) {
    CHECK(r.sequence == 1);
    CHECK(r.withdrawn);
  }, caf::after(5s) >> [] { FAIL("no withdrawn answer"); });
  a->send(pool, net_in_atom::value, done("a", first, "x"));
  const wire::Assign second = next_assign(a, "a");  // then "other" (low was withdrawn)
  CHECK(second.task.sequence == 3);
}

TEST_CASE("a task goes only to a worker that runs its kind; tasks behind it are not held up", "[actors]") {
  PoolFixture f(timerless());
  caf::actor_system& system = f.system;
  const caf::actor& pool = f.pool;
  caf::scoped_actor a{system}, b{system}, job{system};
  a->send(pool, net_in_atom::value, hello("a", {"anneal"}, 2));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(1, "place"));   // nobody runs it yet
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(2, "anneal"));  // behind it in the queue
  const wire::Assign anneal = next_assign(a, "a");
  CHECK(anneal.task.sequence == 2);
  CHECK(anneal.task.kind == "anneal");
  CHECK(anneal.task.body == "opaque to the pool");
  CHECK(status(job, pool).queued == 1);  // the place task waits, though a has a free slot
  b->send(pool, net_in_atom::value, hello("b", {"anneal", "place"}, 1));
  const wire::Assign place = next_assign(b, "b");
  CHECK(place.task.sequence == 1);
  CHECK(place.task.kind == "place");
  const PoolStatus s = status(job, pool);
  CHECK(s.queued == 0);
  CHECK(s.leased == 2);
}

TEST_CASE("a task that misses its lease's deadline on every attempt fails instead of circling", "[actors]") {
  PoolOptions options;
  options.heartbeat_seconds = 0.05;
  options.lease_seconds = 0.1;  // plus the task's own 0 s
  options.liveness = 1000;      // the silent worker stays: only the deadlines act
  options.announce = false;
  PoolFixture f(options);
  caf::actor_system& system = f.system;
  const caf::actor& pool = f.pool;
  caf::scoped_actor a{system}, job{system};
  a->send(pool, net_in_atom::value, hello("a"));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(4, "place"));
  std::string error;
  job->receive([&](const TaskResult&) { FAIL("a result, though no worker answered"); },
               [&](const caf::error& e) { error = system.render(e); }, caf::after(10s) >> [] { FAIL("no answer"); });
  CHECK_THAT(error, Catch::Contains("place task 4 failed 3 times") && Catch::Contains("did not finish within its lease"));
  const PoolStatus s = status(job, pool);
  CHECK(s.requeued == 2);  // the first two expiries ran it again
  CHECK(s.leased == 0);
  CHECK(s.workers.at(0).busy == 0);
}

TEST_CASE("a problem added by two jobs stays served until both dropped it", "[actors]") {
  PoolFixture f(timerless());
  const caf::actor& pool = f.pool;
  caf::scoped_actor a{f.system}, job{f.system};
  a->send(pool, net_in_atom::value, hello("a"));
  const ProblemSpec spec{"{\"ops\":[]}", "name: x\n", "{}", "shared", "", ""};
  const Fingerprint key = problem_key(spec);
  // Whether the pool answers the worker's request for the problem's content.
  auto served = [&] {
    a->send(pool, net_in_atom::value, wire::Envelope{"a", wire::Type::need_problem, wire::encode(wire::NeedProblem{key})});
    bool got = false;
    for (bool waiting = true; waiting;)
      a->receive(
          [&](net_out_atom, const wire::Envelope& e) {
            if (e.type != wire::Type::problem) return;  // heartbeats
            CHECK(wire::decode<wire::ProblemContent>(e.payload).value().spec.graph_label == "shared");
            got = true;
            waiting = false;
          },
          caf::after(300ms) >> [&] { waiting = false; });
    return got;
  };
  job->send(pool, add_problem_atom::value, spec);
  job->send(pool, add_problem_atom::value, spec);  // a second job (or learner stage) on the same content
  job->send(pool, drop_problem_atom::value, key);  // the first ends
  CHECK(served());
  job->send(pool, drop_problem_atom::value, key);  // the second ends
  CHECK_FALSE(served());
}

TEST_CASE("a measurement is leased only to an idle worker, which is drained for it and takes nothing beside it", "[actors]") {
  PoolFixture f(timerless());
  caf::actor_system& system = f.system;
  const caf::actor& pool = f.pool;
  caf::scoped_actor m{system}, job{system};
  m->send(pool, net_in_atom::value, hello("m", {"anneal", "measure:cpu:2"}, 2));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(1));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(2));
  const wire::Assign a1 = next_assign(m, "m"), a2 = next_assign(m, "m");
  // Both slots busy: the measurement waits, and the worker takes no more rollouts meanwhile.
  job->send(pool, run_task_atom::value, std::string("job-2"), 0, task(3, "measure:cpu:2"));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(4));
  m->send(pool, net_in_atom::value, done("m", a1, "1"));
  // One slot free, one lease out: still not idle, so nothing is leased (not task 4 either).
  m->receive([&](net_out_atom, const wire::Envelope& e) { CHECK(e.type != wire::Type::assign); }, caf::after(300ms) >> [] {});
  m->send(pool, net_in_atom::value, done("m", a2, "2"));
  const wire::Assign measure = next_assign(m, "m");
  CHECK(measure.task.sequence == 3);
  // While it runs, its free slot takes nothing.
  m->receive([&](net_out_atom, const wire::Envelope& e) { CHECK(e.type != wire::Type::assign); }, caf::after(300ms) >> [] {});
  m->send(pool, net_in_atom::value, done("m", measure, "measured"));
  CHECK(next_assign(m, "m").task.sequence == 4);
}

TEST_CASE("a worker announcing no slots takes nothing, a measurement neither, until it announces slots again", "[actors]") {
  // What a worker says while a measurement given up on still runs on its cores.
  PoolFixture f(timerless());
  caf::actor_system& system = f.system;
  const caf::actor& pool = f.pool;
  caf::scoped_actor m{system}, r{system}, job{system};
  m->send(pool, net_in_atom::value, hello("m", {"anneal", "measure:cpu:2"}, 0));
  r->send(pool, net_in_atom::value, hello("r", {"anneal"}, 1));  // a free slot elsewhere: the pool dispatches
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(1, "measure:cpu:2"));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(2));
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, task(3));
  CHECK(next_assign(r, "r").task.sequence == 2);
  m->receive([&](net_out_atom, const wire::Envelope& e) { CHECK(e.type != wire::Type::assign); }, caf::after(300ms) >> [] {});
  int offered = -1;
  job->request(pool, caf::infinite, slots_atom::value, std::string("measure:cpu:2")).receive([&](int n) { offered = n; }, [](const caf::error&) {});
  CHECK(offered == 0);  // a measurer waits for its slots a while (PoolMeasurer), not for ever
  int anneal = -1;
  job->request(pool, caf::infinite, slots_atom::value, std::string("anneal")).receive([&](int n) { anneal = n; }, [](const caf::error&) {});
  CHECK(anneal == 1);  // r's; m offers none for now
  m->send(pool, net_in_atom::value, hello("m", {"anneal", "measure:cpu:2"}, 2));  // the run is over
  CHECK(next_assign(m, "m").task.sequence == 1);
}

TEST_CASE("rollouts of a higher-priority job cannot starve a queued measurement of its worker", "[actors]") {
  PoolFixture f(timerless());
  caf::actor_system& system = f.system;
  const caf::actor& pool = f.pool;
  caf::scoped_actor m{system}, job{system};
  m->send(pool, net_in_atom::value, hello("m", {"anneal", "measure:cpu:2"}, 1));
  job->send(pool, run_task_atom::value, std::string("busy"), 5, task(1));
  const wire::Assign first = next_assign(m, "m");
  job->send(pool, run_task_atom::value, std::string("measure"), 0, task(2, "measure:cpu:2"));
  for (long k = 3; k < 6; ++k) job->send(pool, run_task_atom::value, std::string("busy"), 5, task(k));  // queued ahead of it
  m->send(pool, net_in_atom::value, done("m", first, "1"));
  CHECK(next_assign(m, "m").task.sequence == 2);  // the idle worker goes to the measurement
}

TEST_CASE("a flood of unreadable worker messages is counted, and logged at most once a second", "[actors]") {
  PoolFixture f(timerless());
  caf::scoped_actor w{f.system};
  double took = 0;
  const std::string said = testing::stderr_while([&] {
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < 500; ++i) w->send(f.pool, net_in_atom::value, wire::Envelope{"w", wire::Type::hello, "not MessagePack"});
    CHECK(status(w, f.pool).malformed == 500);  // the status request comes after all 500 in the pool's mailbox
    took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  });
  INFO(said);
  // A line when the first came, and at most one more for each second the 500 took (a loaded machine).
  CHECK(std::count(said.begin(), said.end(), '\n') <= 1 + static_cast<long>(took));
  const std::string first = said.substr(0, said.find('\n') + 1);
  CHECK_THAT(first, Catch::StartsWith("gantry: dropped a hello message from w: ") && Catch::EndsWith(" (1 so far)\n"));
}

TEST_CASE("a hello under a worker's name from another process while the first is live is said to clash", "[actors]") {
  PoolFixture f(timerless());
  caf::scoped_actor w{f.system};
  const std::string said = testing::stderr_while([&] {
    w->send(f.pool, net_in_atom::value, hello("twin", {"anneal"}, 1, 100));
    w->send(f.pool, net_in_atom::value, hello("twin", {"anneal"}, 1, 200));  // at once: the first was just heard
    CHECK(status(w, f.pool).workers.size() == 1);
  });
  INFO(said);
  CHECK_THAT(said, Catch::Contains("gantry: worker name twin: process 200 on test-host says hello while process 100 on test-host was heard ") &&
                       Catch::Contains(" ago; if both run, they take the name from each other and one idles: give each its own --name (1 so far)"));
}

TEST_CASE("a worker restarted after a silence is no name clash", "[actors]") {
  PoolOptions options = timerless();
  options.heartbeat_seconds = 0.05;  // a clash needs the first heard within 75 ms
  PoolFixture f(options);
  caf::scoped_actor w{f.system};
  const std::string said = testing::stderr_while([&] {
    w->send(f.pool, net_in_atom::value, hello("phoenix", {"anneal"}, 1, 100));
    CHECK(status(w, f.pool).workers.size() == 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // process 100 dies; 200 starts
    w->send(f.pool, net_in_atom::value, hello("phoenix", {"anneal"}, 1, 200));
    CHECK(status(w, f.pool).workers.front().pid == 200);
  });
  INFO(said);
  CHECK_THAT(said, Catch::Contains("gantry: worker phoenix gone (restarted as process 200 on test-host)"));
  CHECK_THAT(said, !Catch::Contains("worker name phoenix"));
}
