#include "actors/worker_actor.hpp"

#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "actors/log_line.hpp"
#include "core/text.hpp"
#include "actors/measure_task.hpp"
#include "actors/messages.hpp"
#include "actors/off_thread.hpp"
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
  // Assigned, waiting for a slot or for its problem, with the lease's deadline (from its arrival).
  struct Waiting {
    wire::Assign assign;
    Clock::time_point deadline;
  };
  std::deque<Waiting> waiting;
  // Leases on rollouts now, with the time by which their answer is worthless. A lease past it is
  // failed on the tick and its rollout replaced (a timeout per request would cost a clock entry
  // for its whole length: at thousands of tiny tasks a second, a minute of them).
  struct Running {
    caf::actor rollout;
    long sequence = 0;
    Clock::time_point deadline;
    bool measure = false;  // a measurement: nothing else runs beside it
  };
  std::map<std::uint64_t, Running> running;  // by lease
  // Rollouts given up on in the middle of a measurement: the executor's threads keep running until
  // the measurement ends (a run cannot be interrupted), so until these rollouts are down nothing
  // else starts, or it would share the cores being timed.
  std::set<caf::actor_addr> abandoned_measurements;
  std::set<std::pair<std::uint64_t, std::uint64_t>> asked;  // problems requested, not yet received
  // Problems received and being built on a thread of their own: not asked for again (`asked` is
  // cleared every tick) nor built twice while the build runs.
  std::set<std::pair<std::uint64_t, std::uint64_t>> building;
  Clock::time_point last_heard, last_beat;
  // What the worker has said about reaching its coordinator (options.coordinator).
  Clock::time_point last_answer;  // the coordinator's last message (last_heard also restarts at each hello)
  bool joined = false;            // heard it at least once
  double silence_reported = 0;    // the longest silence reported so far (seconds), 0 while it answers
  static inline const char* name = "worker";
};

using Self = caf::stateful_actor<WorkerState>*;

void send_up(Self self, wire::Type type, std::string payload) {
  if (self->state.uplink) self->send(self->state.uplink, net_out_atom::value, wire::Envelope{"", type, std::move(payload)});
}

// Announces the worker with its slots, or none while a measurement given up on still runs: the
// coordinator then leases it nothing (a lease would wait for the run to end, and fail at its
// deadline if the run outlasts it), and the worker announces its slots again once the run is over.
void say_hello(Self self) {
  const WorkerState& s = self->state;
  const WorkerOptions& o = s.options;
  const int slots = s.abandoned_measurements.empty() ? o.slots : 0;
  send_up(self, wire::Type::hello, wire::encode(wire::Hello{o.name, host_name(), static_cast<long>(getpid()), slots, o.kinds}));
}

// Reports on the coordinator's silence (first after options.silence_report_seconds, 10 s, then at
// 20, 40, ... and at most every 5 minutes), so that a worker started against the wrong endpoint, a
// coordinator that is down or a key that is not authorized is not a worker that waits without a word.
constexpr double kLongestSilenceReportGap = 300;

void report_silence(Self self) {
  WorkerState& s = self->state;
  if (s.options.coordinator.empty()) return;
  const double silent = std::chrono::duration<double>(Clock::now() - s.last_answer).count();
  const double next = s.silence_reported == 0 ? s.options.silence_report_seconds
                                              : std::min(2 * s.silence_reported, s.silence_reported + kLongestSilenceReportGap);
  if (silent < next) return;
  s.silence_reported = next;
  log_line("gantry worker " + s.options.name + ": no answer from the coordinator at " + s.options.coordinator + " for " +
           format_seconds(next) + " (is `gantry coordinator` running there? with CURVE keys, is this worker's key in its "
           "--authorized-keys?); still trying");
}

void heard_coordinator(Self self) {
  WorkerState& s = self->state;
  s.last_heard = s.last_answer = Clock::now();
  if (s.options.coordinator.empty()) return;
  if (!s.joined) log_line("gantry worker " + s.options.name + ": joined the coordinator at " + s.options.coordinator);
  else if (s.silence_reported > 0) log_line("gantry worker " + s.options.name + ": the coordinator at " + s.options.coordinator + " answers again");
  s.joined = true;
  s.silence_reported = 0;
}

void answer(Self self, std::uint64_t lease, TaskResult result) {
  result.worker = self->state.options.name;
  send_up(self, wire::Type::done, wire::encode(wire::Done{lease, std::move(result)}));
}

void answer_failed(Self self, std::uint64_t lease, long sequence, const std::string& why) {
  TaskResult failed;
  failed.sequence = sequence;
  failed.error = why;
  answer(self, lease, std::move(failed));
}

void give_up(Self self, std::uint64_t lease, const std::string& why);

bool measuring(const WorkerState& s) {
  return !s.abandoned_measurements.empty() ||
         std::any_of(s.running.begin(), s.running.end(), [](const auto& lease) { return lease.second.measure; });
}

// While a measurement given up on still runs (the worker announces no slots then), a measurement
// leased before the coordinator heard so fails at once instead of at its deadline: the coordinator
// keeps it queued until a worker has a slot, this one again when the run is over. Other leases wait.
void fail_measurements_while_abandoned(Self self) {
  WorkerState& s = self->state;
  if (s.abandoned_measurements.empty()) return;
  for (auto it = s.waiting.begin(); it != s.waiting.end();) {
    if (!is_measure_kind(it->assign.task.kind)) {
      ++it;
      continue;
    }
    answer_failed(self, it->assign.lease, it->assign.task.sequence,
                  "the worker is still running a measurement given up on (it cannot be interrupted)");
    it = s.waiting.erase(it);
  }
}

// Starts waiting leases whose problem is here on idle rollouts; asks for missing problems once.
// A measurement runs alone: while one waits, no other task starts, and it starts once the running
// ones have finished; while it runs, nothing else starts, nor while a measurement given up on at
// its deadline still runs (WorkerState::abandoned_measurements). (The pool already leases a
// measurement only to an idle worker and nothing beside it; this holds for leases of a coordinator
// from before a restart, or of one that does not know the rule.)
void run_waiting(Self self) {
  WorkerState& s = self->state;
  fail_measurements_while_abandoned(self);
  const bool drain = std::any_of(s.waiting.begin(), s.waiting.end(),
                                 [](const WorkerState::Waiting& w) { return is_measure_kind(w.assign.task.kind); });
  for (auto it = s.waiting.begin(); it != s.waiting.end() && !s.idle.empty() && !measuring(s);) {
    const bool measure = is_measure_kind(it->assign.task.kind);
    if (drain && !measure) {
      ++it;
      continue;
    }
    const Fingerprint key = it->assign.task.problem;
    auto problem = s.cache->find(key);
    if (!problem) {
      if (!s.building.count({key.hi, key.lo}) && s.asked.insert({key.hi, key.lo}).second)
        send_up(self, wire::Type::need_problem, wire::encode(wire::NeedProblem{key}));
      ++it;
      continue;
    }
    if (measure && !s.running.empty()) {  // wait for the running rollouts to finish
      ++it;
      continue;
    }
    wire::Assign assign = std::move(it->assign);
    const auto deadline = it->deadline;
    it = s.waiting.erase(it);
    caf::actor rollout = s.idle.back();
    s.idle.pop_back();
    const std::uint64_t lease = assign.lease;
    s.running[lease] = WorkerState::Running{rollout, assign.task.sequence, deadline, measure};
    self->request(rollout, caf::infinite, run_task_atom::value, problem, std::move(assign.task))
        .then(
            [=](const TaskResult& result) {
              auto it = self->state.running.find(lease);
              if (it == self->state.running.end() || it->second.rollout != rollout) return;  // given up on
              self->state.running.erase(it);
              self->state.idle.push_back(rollout);
              answer(self, lease, result);
              run_waiting(self);
            },
            [=](const caf::error& e) { give_up(self, lease, "rollout failed: " + self->system().render(e)); });
  }
}

// Fails a lease whose rollout did not answer (it died, or is past the lease's deadline and the
// coordinator has re-queued the task) and puts a fresh rollout in its place.
void give_up(Self self, std::uint64_t lease, const std::string& why) {
  WorkerState& s = self->state;
  auto it = s.running.find(lease);
  if (it == s.running.end()) return;
  const caf::actor stuck = it->second.rollout;
  const long sequence = it->second.sequence;
  if (it->second.measure) {  // its threads end when the run does; the down message says when
    s.abandoned_measurements.insert(stuck.address());
    self->monitor(stuck);
    say_hello(self);  // no slots until then; before the failure, so the retry goes elsewhere
  }
  s.running.erase(it);
  answer_failed(self, lease, sequence, why);
  self->send_exit(stuck, caf::exit_reason::user_shutdown);
  s.rollouts.erase(std::remove(s.rollouts.begin(), s.rollouts.end(), stuck), s.rollouts.end());
  try {
    caf::actor fresh = spawn_rollout(self->system(), s.options, static_cast<int>(s.rollouts.size()));
    s.rollouts.push_back(fresh);
    s.idle.push_back(fresh);
  } catch (const std::exception& spawn_error) {
    // No thread for a replacement: serve on with one slot fewer, and say so.
    s.options.slots = std::max(0, s.options.slots - 1);
    log_line(std::string() + "gantry worker: cannot replace a stuck rollout (" + spawn_error.what() + "); serving with " +
             std::to_string(s.options.slots) + " slots");
    say_hello(self);
  }
  run_waiting(self);
}

// Leases that waited past their deadline (their problem never came, or a measurement held them
// back) fail, so the coordinator runs them elsewhere; problems still missing are asked for again
// (a request the coordinator could not answer then, after a restart or a lost message, is not lost).
void drop_stale_waiting(Self self) {
  WorkerState& s = self->state;
  const auto now = Clock::now();
  for (auto it = s.waiting.begin(); it != s.waiting.end();) {
    if (it->deadline >= now) {
      ++it;
      continue;
    }
    answer_failed(self, it->assign.lease, it->assign.task.sequence,
                  "waited past the lease's deadline for its problem or a free slot");
    it = s.waiting.erase(it);
  }
  s.asked.clear();
  run_waiting(self);
}

void give_up_overdue(Self self) {
  const auto now = Clock::now();
  std::vector<std::uint64_t> overdue;
  for (const auto& [lease, run] : self->state.running)
    if (run.deadline < now) overdue.push_back(lease);
  for (std::uint64_t lease : overdue) give_up(self, lease, "rollout did not finish before the lease's deadline");
}

// Every waiting lease of `key` fails (the coordinator gives up after a few attempts).
void fail_waiting(Self self, const Fingerprint& key, const std::string& why) {
  WorkerState& s = self->state;
  for (auto it = s.waiting.begin(); it != s.waiting.end();) {
    if (it->assign.task.problem != key) {
      ++it;
      continue;
    }
    answer_failed(self, it->assign.lease, it->assign.task.sequence, why);
    it = s.waiting.erase(it);
  }
}

void on_message(Self self, const wire::Envelope& e) {
  WorkerState& s = self->state;
  heard_coordinator(self);
  switch (e.type) {
    case wire::Type::assign: {
      auto m = wire::decode<wire::Assign>(e.payload);
      if (!m) {
        log_line(std::string() + "gantry worker: dropped an assign: " + m.error().message);
        return;
      }
      const auto deadline = deadline_after(m.value().deadline_seconds);
      s.waiting.push_back({std::move(m).value(), deadline});
      return run_waiting(self);
    }
    case wire::Type::problem: {
      auto m = wire::decode<wire::ProblemContent>(e.payload);
      if (!m) {
        log_line(std::string() + "gantry worker: dropped a problem: " + m.error().message);
        return;
      }
      // Built on a thread of its own: a large graph takes seconds, and the worker's heartbeats
      // must go on meanwhile. Its tasks wait until it is built.
      const Fingerprint key = m.value().key;
      s.asked.erase({key.hi, key.lo});
      if (!s.building.insert({key.hi, key.lo}).second) return;  // a second copy of content being built
      ProblemCache* cache = s.cache;
      const std::function<void()> hook = s.options.before_build;
      auto content = std::make_shared<ProblemSpec>(std::move(m.value().spec));
      using Built = std::shared_ptr<const BuiltProblem>;
      off_thread<Built>(self, [=]() -> Result<Built> {
        if (problem_key(*content) != key) return make_error("content does not match its key");
        if (hook) hook();
        return cache->build(*content);
      }, [=](Result<Built> built) {
        self->state.building.erase({key.hi, key.lo});
        if (!built) fail_waiting(self, key, "cannot build problem " + key.hex() + ": " + built.error().message);
        else self->state.cache->insert(built.value());  // again: other builds may have evicted it meanwhile
        run_waiting(self);
      });
      return;
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
  for (const std::string& kind : measure_kinds(options.devices))
    if (std::find(s.options.kinds.begin(), s.options.kinds.end(), kind) == s.options.kinds.end()) s.options.kinds.push_back(kind);
  s.cache = cache;
  s.rollouts = rollouts;
  s.idle = rollouts;
  self->set_exit_handler([=](const caf::exit_msg& msg) {
    send_up(self, wire::Type::bye, wire::encode_empty());
    for (const caf::actor& r : self->state.rollouts) self->send_exit(r, caf::exit_reason::user_shutdown);
    self->quit(msg.reason);
  });
  self->set_down_handler([=](const caf::down_msg& msg) {
    WorkerState& st = self->state;
    if (st.abandoned_measurements.erase(msg.source) == 0) return;
    if (st.abandoned_measurements.empty()) say_hello(self);  // its slots again
    run_waiting(self);
  });
  return {
      [=](uplink_atom, caf::actor uplink) {
        self->state.uplink = std::move(uplink);
        self->state.last_heard = self->state.last_answer = Clock::now();
        say_hello(self);
        if (self->state.options.timers)
          self->delayed_send(self, milliseconds_of(self->state.options.heartbeat_seconds), tick_atom::value);
      },
      [=](net_in_atom, const wire::Envelope& e) { on_message(self, e); },
      [=](tick_atom) {
        give_up_overdue(self);
        drop_stale_waiting(self);
        report_silence(self);
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
  return options.detached_rollouts ? system.spawn<caf::detached>(rollout_actor, index, options.devices)
                                   : system.spawn(rollout_actor, index, options.devices);
}

caf::actor spawn_worker(caf::actor_system& system, WorkerOptions options, ProblemCache* cache,
                        std::vector<caf::actor> rollouts) {
  return system.spawn(worker_actor, std::move(options), cache, std::move(rollouts));
}

void connect_worker(caf::actor worker, caf::actor uplink) {
  caf::anon_send(worker, uplink_atom::value, std::move(uplink));
}

}  // namespace gantry
