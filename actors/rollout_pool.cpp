#include "actors/rollout_pool.hpp"

#include <chrono>
#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>

#include "actors/log_line.hpp"
#include "actors/measure_task.hpp"
#include "actors/messages.hpp"
#include "actors/rate_limited_log.hpp"
#include "core/text.hpp"

namespace gantry {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Task {
  std::string job;
  int priority = 0;
  long order = 0;          // submission order among equal priorities
  int attempts = 0;
  std::string last_peer;   // the worker that lost or failed it last: another one is preferred
  RolloutTask task;
  caf::response_promise answer;
};

struct Lease {
  Task task;
  std::string peer;
  Clock::time_point deadline;
};

struct Worker {
  caf::actor link;
  wire::Hello hello;
  int busy = 0;
  int measuring = 0;        // measure leases: the worker runs one alone, so it takes nothing else
  long done = 0;
  double busy_seconds = 0;  // rollout time of its committed results
  Clock::time_point last_seen;
  std::string distrusted;   // why its answers are refused (distrust_atom): it runs no kind until it restarts
};

struct PoolState {
  PoolOptions options;
  std::map<std::string, Worker> workers;      // by peer identity
  std::deque<Task> queue;                     // kept sorted: priority desc, then order
  std::map<std::uint64_t, Lease> leases;
  RateLimitedLog malformed_log;               // lines about unreadable worker messages: one a second
  RateLimitedLog name_clash_log;              // lines about two live workers of one name
  long name_clashes = 0;
  // Problems by key, with how many adds (jobs, learner stages) hold each: two jobs on the same
  // graph and cluster share an entry, and one ending must not take it from the other.
  struct HeldProblem {
    ProblemSpec spec;
    int holders = 0;
  };
  std::map<std::pair<std::uint64_t, std::uint64_t>, HeldProblem> problems;
  std::uint64_t lease_epoch = 0, next_lease = 1;
  long next_order = 0;
  Clock::time_point last_beat;
  PoolStatus counters;
  static inline const char* name = "rollout_pool";
};

using Self = caf::stateful_actor<PoolState>*;

void send_to(Self self, const Worker& w, const std::string& peer, wire::Type type, std::string payload) {
  self->send(w.link, net_out_atom::value, wire::Envelope{peer, type, std::move(payload)});
}

void enqueue(Self self, Task task) {
  auto& q = self->state.queue;
  auto at = q.begin();
  while (at != q.end() && (at->priority > task.priority || (at->priority == task.priority && at->order < task.order))) ++at;
  q.insert(at, std::move(task));
}

double deadline_seconds(const PoolState& s, const RolloutTask& t) { return s.options.lease_seconds + t.seconds; }

bool runs(const Worker& w, const std::string& kind) {
  return w.distrusted.empty() && std::find(w.hello.kinds.begin(), w.hello.kinds.end(), kind) != w.hello.kinds.end();
}

bool has_free_slot(const PoolState& s) {
  for (const auto& [id, w] : s.workers)
    if (w.busy < w.hello.slots && w.measuring == 0) return true;
  return false;
}

// A measurement is leased only to an idle worker and fills it: the worker runs it alone
// (actors/measure_task.hpp), and a task leased beside it would spend its lease waiting. A worker
// being drained for a queued measurement takes no other task meanwhile.
bool can_take(const Worker& w, const std::string& kind, bool draining) {
  if (w.measuring > 0 || !runs(w, kind) || w.hello.slots <= 0) return false;  // no slots (for now): it takes nothing
  return is_measure_kind(kind) ? w.busy == 0 : w.busy < w.hello.slots && !draining;
}

// The workers reserved for queued measurements: for each, one worker offering its kind (an idle
// one when there is one, else the one with the fewest leases, which becomes idle soonest) that
// takes no rollouts meanwhile, so rollouts that keep coming (of a higher-priority job, or queued
// ahead of it) cannot starve the measurement.
std::set<std::string> workers_to_drain(const PoolState& s) {
  std::set<std::string> drain;
  for (const Task& t : s.queue) {
    if (!is_measure_kind(t.task.kind)) continue;
    const std::string* pick = nullptr;
    int fewest = 0;
    for (const auto& [id, w] : s.workers) {
      if (!runs(w, t.task.kind) || w.measuring > 0 || w.hello.slots <= 0 || drain.count(id)) continue;
      if (!pick || w.busy < fewest) {
        pick = &id;
        fewest = w.busy;
      }
    }
    if (pick) drain.insert(*pick);
  }
  return drain;
}

// A lease of `kind` on `w` ended (done, failed, lost or expired): its slot is free again.
void end_lease(Worker& w, const std::string& kind) {
  if (w.busy > 0) --w.busy;
  if (is_measure_kind(kind) && w.measuring > 0) --w.measuring;
}

// Leases queued tasks to free slots, in queue order, until one or the other runs out: each to the
// emptiest free worker that runs its kind, and a task that was lost or failed on a worker goes
// elsewhere when another such worker is free. A task no free worker runs waits; those behind it
// do not.
void dispatch(Self self) {
  PoolState& s = self->state;
  const std::set<std::string> draining = workers_to_drain(s);
  for (auto it = s.queue.begin(); it != s.queue.end() && has_free_slot(s);) {
    Worker* best = nullptr;
    const std::string* peer = nullptr;
    const std::string& avoid = it->last_peer;
    const auto rank = [&](const std::string& id, const Worker& w) {
      return std::make_pair(id != avoid, w.hello.slots - w.busy);
    };
    for (auto& [id, w] : s.workers)
      if (can_take(w, it->task.kind, draining.count(id) > 0) && (!best || rank(id, w) > rank(*peer, *best))) {
        best = &w;
        peer = &id;
      }
    if (!best) {
      ++it;
      continue;
    }
    Task task = std::move(*it);
    it = s.queue.erase(it);
    task.task.attempt = task.attempts;
    const std::uint64_t id = s.lease_epoch | s.next_lease++;
    const double seconds = deadline_seconds(s, task.task);
    wire::Assign assign{id, seconds, task.task};
    ++best->busy;
    if (is_measure_kind(task.task.kind)) ++best->measuring;
    send_to(self, *best, *peer, wire::Type::assign, wire::encode(assign));
    s.leases.emplace(id, Lease{std::move(task), *peer, deadline_after(seconds)});
  }
}

// Sends a lease's task back to the queue (its result, should it still come, will be dropped).
void requeue(Self self, std::uint64_t lease_id, const std::string& why) {
  PoolState& s = self->state;
  auto it = s.leases.find(lease_id);
  if (it == s.leases.end()) return;
  Lease lease = std::move(it->second);
  s.leases.erase(it);
  auto w = s.workers.find(lease.peer);
  if (w != s.workers.end()) end_lease(w->second, lease.task.task.kind);
  ++s.counters.requeued;
  lease.task.last_peer = lease.peer;
  log_line(std::string() + "gantry: " + lease.task.task.kind + " task " + std::to_string(lease.task.task.sequence) + " of job " +
           lease.task.job + " re-queued: " + why);
  enqueue(self, std::move(lease.task));
}

void fail_task(Self self, std::map<std::uint64_t, Lease>::iterator it, const std::string& why);

void forget_worker(Self self, const std::string& peer, const std::string& why) {
  PoolState& s = self->state;
  auto w = s.workers.find(peer);
  if (w == s.workers.end()) return;
  if (s.options.announce) log_line("gantry: worker " + w->second.hello.name + " gone (" + why + ")");
  s.workers.erase(w);
  std::vector<std::uint64_t> mine;
  for (const auto& [id, lease] : s.leases)
    if (lease.peer == peer) mine.push_back(id);
  // A lost lease counts as a failed attempt: a task that kills its worker (a measurement out of
  // memory, a crash) must not go on to kill every other.
  for (std::uint64_t id : mine) {
    auto it = s.leases.find(id);
    if (++it->second.task.attempts >= s.options.max_attempts)
      fail_task(self, it, "the last time its worker " + peer + " was lost (" + why + ")");
    else
      requeue(self, id, "worker lost");
  }
  dispatch(self);
}

// Ends a lease whose task has used up its attempts: the asker hears why, the slot is free.
void fail_task(Self self, std::map<std::uint64_t, Lease>::iterator it, const std::string& why) {
  PoolState& s = self->state;
  Task& task = it->second.task;
  task.answer.deliver(caf::make_error(caf::sec::runtime_error, task.task.kind + " task " + std::to_string(task.task.sequence) +
                                                                   " failed " + std::to_string(task.attempts) + " times, " + why));
  auto w = s.workers.find(it->second.peer);
  if (w != s.workers.end()) end_lease(w->second, task.task.kind);
  s.leases.erase(it);
}

// A lease past its deadline: the task runs again elsewhere, and counts as a failed attempt (a
// task that cannot finish within its lease must not circle forever).
void expire(Self self, std::uint64_t lease_id) {
  PoolState& s = self->state;
  auto it = s.leases.find(lease_id);
  if (it == s.leases.end()) return;
  if (++it->second.task.attempts >= s.options.max_attempts)
    return fail_task(self, it, "last on " + it->second.peer + ": it did not finish within its lease (raise --lease-seconds for longer tasks)");
  requeue(self, lease_id, "lease deadline passed");
}

void on_done(Self self, const std::string& peer, const wire::Done& done) {
  PoolState& s = self->state;
  auto it = s.leases.find(done.lease);
  if (it == s.leases.end()) {  // expired and re-queued, or a duplicate: the task counts once
    ++s.counters.stale;
    return;
  }
  Lease& lease = it->second;
  // Only the worker holding the lease may end it: lease ids are an epoch and a counter, which any
  // connected peer could guess and answer with anything.
  if (peer != lease.peer) {
    ++s.counters.stale;
    if (s.options.announce)
      log_line("gantry: dropped a result for " + lease.peer + "'s lease " + std::to_string(done.lease) + " sent by " + peer);
    return;
  }
  if (!done.result.error.empty()) {
    Task& task = lease.task;
    ++task.attempts;
    if (task.attempts >= s.options.max_attempts) {
      fail_task(self, it, "last on " + done.result.worker + ": " + done.result.error);
    } else {
      requeue(self, done.lease, "failed on " + done.result.worker + ": " + done.result.error);
    }
    dispatch(self);
    return;
  }
  ++s.counters.committed;
  auto w = s.workers.find(lease.peer);
  TaskResult result = done.result;
  if (w != s.workers.end()) result.worker = w->second.hello.name;  // as its hello (and status) names it, not as the result claims
  lease.task.answer.deliver(std::move(result));
  if (w != s.workers.end()) end_lease(w->second, lease.task.task.kind);
  if (w != s.workers.end()) {
    ++w->second.done;
    w->second.busy_seconds += done.result.seconds;
  }
  s.leases.erase(it);
  dispatch(self);
}

// `heard_before`: when the worker known under this name was heard before this hello (its message
// refreshes that time before it is read).
void on_hello(Self self, const std::string& peer, const wire::Hello& hello, Clock::time_point heard_before) {
  PoolState& s = self->state;
  // A worker restarted under the same name (another process) holds none of its predecessor's
  // leases: they run again now, not after their deadlines, and its slots start free.
  if (auto known = s.workers.find(peer);
      known != s.workers.end() && (known->second.hello.pid != hello.pid || known->second.hello.host != hello.host)) {
    // A process that was heard from a moment ago is not one that restarted: two live workers share
    // the name, and the socket gives the name to whichever connected last, so they take it from
    // each other and one of them idles. Said (once a second at most), since neither can tell.
    const Worker& before = known->second;
    if (const double since = seconds_since(heard_before); since < s.options.heartbeat_seconds * 1.5)
      s.name_clash_log.note("worker name " + peer + ": process " + std::to_string(hello.pid) + " on " + hello.host +
                                " says hello while process " + std::to_string(before.hello.pid) + " on " + before.hello.host +
                                " was heard " + format_seconds(since, 2) + " ago; if both run, they take the name from each "
                                "other and one idles: give each its own --name",
                            ++s.name_clashes);
    forget_worker(self, peer, "restarted as process " + std::to_string(hello.pid) + " on " + hello.host);
  }
  auto [it, fresh] = s.workers.try_emplace(peer);
  Worker& w = it->second;
  w.link = caf::actor_cast<caf::actor>(self->current_sender());
  w.hello = hello;
  w.last_seen = Clock::now();
  if (fresh && s.options.announce) log_line(std::string() + "gantry: worker " + hello.name + " (" + hello.host + ") joined with " + std::to_string(hello.slots) + " slots");
  dispatch(self);
}

void on_message(Self self, const wire::Envelope& e) {
  PoolState& s = self->state;
  auto known = s.workers.find(e.peer);
  const Clock::time_point heard_before = known != s.workers.end() ? known->second.last_seen : Clock::time_point{};
  if (known != s.workers.end()) known->second.last_seen = Clock::now();
  const auto bad = [&](const Error& error) {
    s.malformed_log.note(std::string("dropped a ") + wire::to_string(e.type) + " message from " + e.peer + ": " + error.message, ++s.counters.malformed);
  };
  switch (e.type) {
    case wire::Type::hello: {
      auto m = wire::decode<wire::Hello>(e.payload);
      if (!m) return bad(m.error());
      return on_hello(self, e.peer, m.value(), heard_before);
    }
    case wire::Type::heartbeat:
      if (known == s.workers.end())  // a worker from before a restart: it must say hello again
        self->send(caf::actor_cast<caf::actor>(self->current_sender()), net_out_atom::value,
                   wire::Envelope{e.peer, wire::Type::hello, wire::encode_empty()});
      return;
    case wire::Type::done: {
      auto m = wire::decode<wire::Done>(e.payload);
      if (!m) return bad(m.error());
      return on_done(self, e.peer, m.value());
    }
    case wire::Type::need_problem: {
      auto m = wire::decode<wire::NeedProblem>(e.payload);
      if (!m) return bad(m.error());
      auto p = s.problems.find({m.value().key.hi, m.value().key.lo});
      if (p == s.problems.end() || known == s.workers.end()) return;  // its task was withdrawn meanwhile
      send_to(self, known->second, e.peer, wire::Type::problem, wire::encode(wire::ProblemContent{m.value().key, p->second.spec}));
      return;
    }
    case wire::Type::bye:
      return forget_worker(self, e.peer, "said bye");
    default:
      return bad(make_error(std::string("not a worker message: ") + wire::to_string(e.type)));
  }
}

// Heartbeats to every worker; workers silent too long are gone; leases past their deadline return.
void on_tick(Self self) {
  PoolState& s = self->state;
  const double gone_after = s.options.heartbeat_seconds * s.options.liveness;
  const bool beat = seconds_since(s.last_beat) >= s.options.heartbeat_seconds;
  if (beat) s.last_beat = Clock::now();
  std::vector<std::string> silent;
  for (auto& [peer, w] : s.workers) {
    if (seconds_since(w.last_seen) > gone_after)
      silent.push_back(peer);
    else if (beat)
      send_to(self, w, peer, wire::Type::heartbeat, wire::encode_empty());
  }
  for (const std::string& peer : silent) forget_worker(self, peer, "no heartbeat for " + std::to_string(static_cast<int>(gone_after)) + " s");
  std::vector<std::uint64_t> expired;
  const auto now = Clock::now();
  for (const auto& [id, lease] : s.leases)
    if (lease.deadline < now) expired.push_back(id);
  for (std::uint64_t id : expired) expire(self, id);
  dispatch(self);
}

caf::behavior rollout_pool(Self self, PoolOptions options) {
  PoolState& s = self->state;
  s.options = options;
  // Lease ids of two coordinator runs never meet: a worker's late answer from before a restart is stale.
  s.lease_epoch = (std::random_device{}() & 0x7fffffffull) << 32;
  if (options.timers) self->delayed_send(self, milliseconds_of(options.heartbeat_seconds), tick_atom::value);
  return {
      [=](run_task_atom, const std::string& job, int priority, RolloutTask rollout_task) -> caf::result<TaskResult> {
        Task task{job, priority, self->state.next_order++, 0, {}, std::move(rollout_task), self->make_response_promise()};
        caf::response_promise answer = task.answer;
        enqueue(self, std::move(task));
        dispatch(self);
        return answer;
      },
      [=](withdraw_atom, const std::string& job) {
        auto& q = self->state.queue;
        for (auto it = q.begin(); it != q.end();) {
          if (it->job != job) {
            ++it;
            continue;
          }
          TaskResult withdrawn;
          withdrawn.sequence = it->task.sequence;
          withdrawn.withdrawn = true;
          it->answer.deliver(withdrawn);
          it = q.erase(it);
        }
      },
      [=](distrust_atom, const std::string& name, const std::string& why) {
        // Its leases run out as they are (their answers are checked again); a worker of that name
        // that restarts (another process) is a new record, trusted again.
        PoolState& st = self->state;
        auto it = st.workers.find(name);  // a worker's peer identity is its name
        if (it == st.workers.end() || !it->second.distrusted.empty()) return;
        it->second.distrusted = why;
        log_line("gantry: worker " + name + " gets no more tasks until it restarts: " + why);
      },
      [=](slots_atom, const std::string& kind) {  // slots of the live workers that run `kind`
        int n = 0;
        for (const auto& [peer, w] : self->state.workers)
          if (runs(w, kind)) n += w.hello.slots;
        return n;
      },
      [=](status_atom) {
        PoolState& st = self->state;
        PoolStatus out = st.counters;
        for (const auto& [peer, w] : st.workers)
          out.workers.push_back({peer, w.hello.name, w.hello.host, w.hello.pid, w.hello.slots, w.busy, w.done, w.busy_seconds,
                                 seconds_since(w.last_seen), executor_devices_of(w.hello.kinds), w.distrusted});
        out.queued = static_cast<long>(st.queue.size());
        out.leased = static_cast<long>(st.leases.size());
        return out;
      },
      [=](add_problem_atom, const ProblemSpec& spec) {
        const Fingerprint key = problem_key(spec);
        auto& held = self->state.problems[{key.hi, key.lo}];
        held.spec = spec;
        ++held.holders;
      },
      [=](drop_problem_atom, const Fingerprint& key) {
        auto it = self->state.problems.find({key.hi, key.lo});
        if (it != self->state.problems.end() && --it->second.holders <= 0) self->state.problems.erase(it);
      },
      [=](net_in_atom, const wire::Envelope& e) { on_message(self, e); },
      [=](lost_atom, const std::string& peer) { forget_worker(self, peer, "unreachable"); },
      [=](tick_atom) {
        on_tick(self);
        self->delayed_send(self, milliseconds_of(self->state.options.heartbeat_seconds / 4), tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_rollout_pool(caf::actor_system& system, PoolOptions options) {
  return system.spawn(rollout_pool, options);
}

}  // namespace gantry
