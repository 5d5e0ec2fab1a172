#include "actors/worker_actor.hpp"

#include <unistd.h>

#include <chrono>
#include <deque>
#include <set>

#include "actors/log_line.hpp"
#include "actors/messages.hpp"
#include "actors/problem_spec.hpp"
#include "actors/rollout_actor.hpp"
#include "core/host_name.hpp"

namespace gantry {

namespace {

using Clock = std::chrono::steady_clock;
using uplink_atom = caf::atom_constant<caf::atom("uplink")>;

struct WorkerState {
  WorkerOptions options;
  ProblemCache* cache = nullptr;
  caf::actor uplink;
  std::vector<caf::actor> rollouts;
  std::vector<caf::actor> idle;
  std::deque<wire::Assign> waiting;          // assigned, waiting for a slot or for its problem
  std::set<std::pair<std::uint64_t, std::uint64_t>> asked;  // problems requested, not yet received
  Clock::time_point last_heard, last_beat;
  static inline const char* name = "worker";
};

using Self = caf::stateful_actor<WorkerState>*;

void send_up(Self self, wire::Type type, std::string payload) {
  if (self->state.uplink) self->send(self->state.uplink, net_out_atom::value, wire::Envelope{"", type, std::move(payload)});
}

void say_hello(Self self) {
  const WorkerOptions& o = self->state.options;
  send_up(self, wire::Type::hello, wire::encode(wire::Hello{o.name, host_name(), static_cast<long>(getpid()), o.slots, o.kinds}));
}

void answer(Self self, std::uint64_t lease, TaskResult result) {
  result.worker = self->state.options.name;
  send_up(self, wire::Type::done, wire::encode(wire::Done{lease, std::move(result)}));
}

// Starts waiting leases whose problem is here on idle rollouts; asks for missing problems once.
void run_waiting(Self self) {
  WorkerState& s = self->state;
  for (auto it = s.waiting.begin(); it != s.waiting.end() && !s.idle.empty();) {
    const Fingerprint key = it->task.problem;
    auto problem = s.cache->find(key);
    if (!problem) {
      if (s.asked.insert({key.hi, key.lo}).second) send_up(self, wire::Type::need_problem, wire::encode(wire::NeedProblem{key}));
      ++it;
      continue;
    }
    wire::Assign assign = std::move(*it);
    it = s.waiting.erase(it);
    caf::actor rollout = s.idle.back();
    s.idle.pop_back();
    const std::uint64_t lease = assign.lease;
    const long sequence = assign.task.sequence;
    const auto timeout = milliseconds_of(assign.deadline_seconds);
    self->request(rollout, timeout, run_task_atom::value, problem, std::move(assign.task))
        .then(
            [=](const TaskResult& result) {
              self->state.idle.push_back(rollout);
              answer(self, lease, result);
              run_waiting(self);
            },
            [=](const caf::error& e) {
              // Past its deadline the coordinator has re-queued the lease; the rollout is still busy
              // with it and comes back to `idle` only if it answers after all (it does not: one
              // response per request), so a replacement is spawned.
              WorkerState& st = self->state;
              TaskResult failed;
              failed.sequence = sequence;
              failed.error = "rollout did not answer: " + self->system().render(e);
              answer(self, lease, failed);
              self->send_exit(rollout, caf::exit_reason::user_shutdown);
              try {
                caf::actor fresh = spawn_rollout(self->system(), st.options, static_cast<int>(st.rollouts.size()));
                st.rollouts.push_back(fresh);
                st.idle.push_back(fresh);
              } catch (const std::exception& spawn_error) {
                // No thread for a replacement: serve on with one slot fewer, and say so.
                st.options.slots = std::max(0, st.options.slots - 1);
                log_line(std::string() + "gantry worker: cannot replace a stuck rollout (" + spawn_error.what() +
                         "); serving with " + std::to_string(st.options.slots) + " slots");
                say_hello(self);
              }
              run_waiting(self);
            });
  }
}

void on_message(Self self, const wire::Envelope& e) {
  WorkerState& s = self->state;
  s.last_heard = Clock::now();
  switch (e.type) {
    case wire::Type::assign: {
      auto m = wire::decode<wire::Assign>(e.payload);
      if (!m) {
        log_line(std::string() + "gantry worker: dropped an assign: " + m.error().message);
        return;
      }
      s.waiting.push_back(std::move(m).value());
      return run_waiting(self);
    }
    case wire::Type::problem: {
      auto m = wire::decode<wire::ProblemContent>(e.payload);
      if (!m) {
        log_line(std::string() + "gantry worker: dropped a problem: " + m.error().message);
        return;
      }
      const Fingerprint key = m.value().key;
      s.asked.erase({key.hi, key.lo});
      auto built = problem_key(m.value().spec) == key ? s.cache->build(m.value().spec)
                                                      : Result<std::shared_ptr<const BuiltProblem>>(make_error("content does not match its key"));
      if (!built) {  // every lease of it fails (the coordinator gives up after a few attempts)
        for (auto it = s.waiting.begin(); it != s.waiting.end();) {
          if (it->task.problem != key) {
            ++it;
            continue;
          }
          TaskResult failed;
          failed.sequence = it->task.sequence;
          failed.error = "cannot build problem " + key.hex() + ": " + built.error().message;
          answer(self, it->lease, failed);
          it = s.waiting.erase(it);
        }
      }
      return run_waiting(self);
    }
    case wire::Type::hello:  // the coordinator does not know us (it restarted)
      return say_hello(self);
    case wire::Type::heartbeat:
      return;
    default:
      log_line(std::string() + "gantry worker: ignored a " + wire::to_string(e.type) + " message");
  }
}

caf::behavior worker_actor(Self self, WorkerOptions options, ProblemCache* cache, std::vector<caf::actor> rollouts) {
  WorkerState& s = self->state;
  s.options = options;
  s.options.slots = static_cast<int>(rollouts.size());
  s.cache = cache;
  s.rollouts = rollouts;
  s.idle = rollouts;
  self->set_exit_handler([=](const caf::exit_msg& msg) {
    send_up(self, wire::Type::bye, wire::encode_empty());
    for (const caf::actor& r : self->state.rollouts) self->send_exit(r, caf::exit_reason::user_shutdown);
    self->quit(msg.reason);
  });
  return {
      [=](uplink_atom, caf::actor uplink) {
        self->state.uplink = std::move(uplink);
        self->state.last_heard = Clock::now();
        say_hello(self);
        if (self->state.options.timers)
          self->delayed_send(self, milliseconds_of(self->state.options.heartbeat_seconds), tick_atom::value);
      },
      [=](net_in_atom, const wire::Envelope& e) { on_message(self, e); },
      [=](tick_atom) {
        WorkerState& st = self->state;
        const double silent = std::chrono::duration<double>(Clock::now() - st.last_heard).count();
        if (silent > st.options.heartbeat_seconds * st.options.liveness) {
          say_hello(self);  // the coordinator may have restarted: our leases are gone, our slots are not
          st.last_heard = Clock::now();
        } else {
          send_up(self, wire::Type::heartbeat, wire::encode_empty());
        }
        self->delayed_send(self, milliseconds_of(st.options.heartbeat_seconds), tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_rollout(caf::actor_system& system, const WorkerOptions& options, int index) {
  return options.detached_rollouts ? system.spawn<caf::detached>(rollout_actor, index) : system.spawn(rollout_actor, index);
}

caf::actor spawn_worker(caf::actor_system& system, WorkerOptions options, ProblemCache* cache,
                        std::vector<caf::actor> rollouts) {
  return system.spawn(worker_actor, std::move(options), cache, std::move(rollouts));
}

void connect_worker(caf::actor worker, caf::actor uplink) {
  caf::anon_send(worker, uplink_atom::value, std::move(uplink));
}

}  // namespace gantry
