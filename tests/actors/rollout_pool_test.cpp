// The rollout pool's leases, seen from the wire: test actors play the workers (hello, done) and a
// job (run_task). A task whose worker is lost or whose lease expires runs again elsewhere; the
// asker hears exactly one result; a late answer on an old lease is dropped as stale.
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/messages.hpp"
#include "actors/rollout_pool.hpp"

using namespace gantry;

namespace {

using namespace std::chrono_literals;

wire::Envelope hello(const std::string& peer) {
  return {peer, wire::Type::hello, wire::encode(wire::Hello{peer, "test-host", 1, 1})};
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

wire::Envelope done(const std::string& peer, const wire::Assign& a, long evaluations) {
  BatchResult r;
  r.sequence = a.batch.sequence;
  r.evaluations = evaluations;
  r.worker = peer;
  return {peer, wire::Type::done, wire::encode(wire::Done{a.lease, r})};
}

// Ends the pool when the test ends, also when a REQUIRE fails (else the actor system waits for it).
struct PoolGuard {
  caf::actor pool;
  ~PoolGuard() { caf::anon_send_exit(pool, caf::exit_reason::user_shutdown); }
};

PoolStatus status(caf::scoped_actor& self, const caf::actor& pool) {
  PoolStatus out;
  self->request(pool, 5s, status_atom::value).receive([&](const PoolStatus& s) { out = s; }, [&](const caf::error&) { FAIL("no status"); });
  return out;
}

}  // namespace

TEST_CASE("a lost worker's lease runs again on another worker; its late answer is stale", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  PoolOptions options;
  options.timers = false;
  caf::actor pool = spawn_rollout_pool(system, options);
  PoolGuard guard{pool};
  caf::scoped_actor a{system}, b{system}, job{system};
  a->send(pool, net_in_atom::value, hello("a"));
  BatchRequest batch;
  batch.sequence = 7;
  batch.evaluations = 100;
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, batch);
  const wire::Assign first = next_assign(a, "a");
  CHECK(first.batch.sequence == 7);
  a->send(pool, lost_atom::value, std::string("a"));        // the transport says a is gone
  b->send(pool, net_in_atom::value, hello("b"));
  const wire::Assign second = next_assign(b, "b");
  CHECK(second.batch.sequence == 7);
  CHECK(second.lease != first.lease);
  b->send(pool, net_in_atom::value, done("b", second, 100));
  a->send(pool, net_in_atom::value, done("a", first, 100));  // too late: the task already counted
  int results = 0;
  for (bool more = true; more;)
    job->receive([&](const BatchResult& r) {
                   ++results;
                   CHECK(r.worker == "b");
                   CHECK(r.evaluations == 100);
                 },
                 caf::after(300ms) >> [&] { more = false; });
  CHECK(results == 1);
  const PoolStatus s = status(job, pool);
  CHECK(s.committed == 1);
  CHECK(s.requeued == 1);
  CHECK(s.stale == 1);
  CHECK(s.leased == 0);
}

TEST_CASE("a lease past its deadline runs again on another worker", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  PoolOptions options;
  options.heartbeat_seconds = 0.1;
  options.lease_seconds = 0.3;  // plus the batch's own 0 s
  options.liveness = 1000;      // silence alone does not drop a worker here: only the deadline acts
  caf::actor pool = spawn_rollout_pool(system, options);
  PoolGuard guard{pool};
  caf::scoped_actor a{system}, b{system}, job{system};
  a->send(pool, net_in_atom::value, hello("a"));
  BatchRequest batch;
  batch.sequence = 3;
  batch.seconds = 0;
  job->send(pool, run_task_atom::value, std::string("job-1"), 0, batch);
  const wire::Assign first = next_assign(a, "a");
  b->send(pool, net_in_atom::value, hello("b"));
  // a holds the lease and says nothing: after 0.3 s the lease expires and goes to b.
  const wire::Assign second = next_assign(b, "b");
  CHECK(second.batch.sequence == 3);
  CHECK(second.lease != first.lease);
  b->send(pool, net_in_atom::value, done("b", second, 1));
  job->receive([&](const BatchResult& r) { CHECK(r.worker == "b"); }, caf::after(5s) >> [] { FAIL("no result"); });
  const PoolStatus s = status(job, pool);
  CHECK(s.requeued == 1);
  CHECK(s.workers.size() == 2);
  CHECK(s.committed == 1);
}

TEST_CASE("a withdrawn job's queued tasks come back unrun; higher priorities are leased first", "[actors]") {
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  PoolOptions options;
  options.timers = false;
  caf::actor pool = spawn_rollout_pool(system, options);
  PoolGuard guard{pool};
  caf::scoped_actor a{system}, job{system};
  BatchRequest low, high, other;
  low.sequence = 1;
  high.sequence = 2;
  other.sequence = 3;
  job->send(pool, run_task_atom::value, std::string("low"), 0, low);
  job->send(pool, run_task_atom::value, std::string("other"), 0, other);
  job->send(pool, run_task_atom::value, std::string("high"), 5, high);
  a->send(pool, net_in_atom::value, hello("a"));  // one slot: the highest priority goes first
  const wire::Assign first = next_assign(a, "a");
  CHECK(first.batch.sequence == 2);
  job->send(pool, withdraw_atom::value, std::string("low"));
  job->receive([&](const BatchResult& r) {
    CHECK(r.sequence == 1);
    CHECK(r.withdrawn);
  }, caf::after(5s) >> [] { FAIL("no withdrawn answer"); });
  a->send(pool, net_in_atom::value, done("a", first, 10));
  const wire::Assign second = next_assign(a, "a");  // then "other" (low was withdrawn)
  CHECK(second.batch.sequence == 3);
}
