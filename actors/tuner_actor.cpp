#include "actors/tuner_actor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <limits>
#include <vector>

#include "actors/log_line.hpp"
#include "actors/anneal_task.hpp"
#include "actors/messages.hpp"
#include "actors/place_task.hpp"
#include "core/deadline.hpp"
#include "core/text.hpp"
#include "core/unix_time.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"

namespace gantry {

struct TunerState {
  TunerConfig config;
  std::chrono::steady_clock::time_point begin;
  TuneOutcome outcome;
  double last_improvement = 0, last_tick = -1;
  long outstanding = 0, next_sequence = 1;  // episode 0 is the heuristics
  long promised = 0;                          // evaluations handed out in batches not yet returned
  // Annealing chains: one per batch in flight. A chain's next batch starts where its last ended.
  struct Chain {
    Placement last;
    long rounds = 0;
    bool busy = false;
  };
  std::vector<Chain> chains;
  int width = 1;                              // chains wanted: the pool's slots or the parallelism
  bool cancelled = false, started = false;
  bool heuristics_pending = false;            // episode 0 is out as a `place` task
  bool stopping = false;
  std::string failure;                        // a rollout or the store failed: the job ends FAILED
  std::set<std::string> distrusted;           // workers whose answers failed their checks (refuse_answer)
  std::unique_ptr<Simulator> simulator;       // checks workers' claimed bests (built on the first)
  caf::response_promise done;
  static inline const char* name = "tuner";
};

namespace {

constexpr double kShortestBatch = 0.001;  // seconds: what a batch gets when the budget has less left

double elapsed(const TunerState& s) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - s.begin).count();
}

double budget_fraction(const TunerState& s) {
  const JobSpec& o = s.config.spec;
  double f = 0;
  if (o.budget_seconds > 0) f = elapsed(s) / o.budget_seconds;
  if (o.budget_evaluations > 0) f = std::max(f, static_cast<double>(s.outcome.evaluations) / o.budget_evaluations);
  return std::min(1.0, f);
}

// Evaluations of the budget not yet spent nor handed out (a large number without a budget).
long unpromised(const TunerState& s) {
  const JobSpec& o = s.config.spec;
  if (o.budget_evaluations <= 0) return std::numeric_limits<long>::max();
  return std::max(0L, o.budget_evaluations - s.outcome.evaluations - s.promised);
}

// Whether a job still waiting for its heuristics must give up on them: cancelled, failed, or out
// of time. (Patience counts from the search's start, and the heuristics are the first evaluations.)
bool must_stop_before_search(const TunerState& s) {
  const JobSpec& o = s.config.spec;
  return !s.failure.empty() || s.cancelled || (o.budget_seconds > 0 && elapsed(s) >= o.budget_seconds);
}

// Why the job must stop now ("" = it goes on).
std::string stop_reason(const TunerState& s) {
  const JobSpec& o = s.config.spec;
  if (!s.failure.empty()) return s.failure;
  if (s.cancelled) return "cancelled";
  if (o.budget_seconds > 0 && elapsed(s) >= o.budget_seconds) return "time budget used";
  if (o.budget_evaluations > 0 && s.outcome.evaluations >= o.budget_evaluations)
    return s.outcome.evaluations == s.outcome.heuristic_evaluations && s.outcome.batches == 0
               ? "evaluation budget used by the heuristics"
               : "evaluation budget used";
  if (o.patience_seconds > 0 && elapsed(s) - s.last_improvement > o.patience_seconds)
    return "stopped by --patience: no improvement for " + format_seconds(elapsed(s) - s.last_improvement, 3);
  if (o.budget_seconds <= 0 && o.budget_evaluations <= 0 && o.patience_seconds <= 0) return "no budget given";
  return "";
}

void report(TunerState& s, TuneProgress::Kind kind) {
  const JobHooks& o = s.config.hooks;
  if (!o.on_progress) return;
  const double now = elapsed(s);
  if (kind == TuneProgress::Kind::tick) {
    if (now - s.last_tick < 0.5) return;
    s.last_tick = now;
  }
  o.on_progress(TuneProgress{kind, now, s.outcome.evaluations, s.outcome.best.makespan, s.outcome.best.method,
                             budget_fraction(s)});
}

ScheduleRecord record_of(const TunerState& s) {
  const TunerConfig& c = s.config;
  ScheduleRecord r;
  r.graph = c.graph;
  r.cluster = c.runtime;
  r.graph_label = c.problem->spec.graph_label;
  r.cluster_name = c.problem->cluster.name();
  r.method = s.outcome.best.method;
  r.sim = runtime_name(c.problem->sim);
  r.unit = c.problem->graph.cost_unit();
  r.makespan = s.outcome.best.makespan;
  r.lower_bound = makespan_lower_bound(c.problem->graph, *c.problem->costs, c.problem->cluster, c.problem->sim);
  r.placement = s.outcome.best.placement;
  r.job_id = c.job_id;
  r.found_at = unix_now();
  r.evaluations = s.outcome.evaluations;
  r.model_version = kModelVersion;
  r.sim_options = sim_options_json(c.problem->sim);
  return r;
}

void fail(caf::stateful_actor<TunerState>* self, const std::string& what) {
  TunerState& s = self->state;
  if (!s.failure.empty()) return;  // the first failure is the job's
  s.failure = what;
  s.stopping = true;
  log_line("gantry: " + what + "; the job stops (its best is kept in memory)");
}

void finish(caf::stateful_actor<TunerState>* self);

// Workers whose answers fail their checks before the job stops: one faulty worker (another
// version, a broken one, or a peer that is not a gantry worker) does not end a job the others
// serve, but a cluster of them is no cluster to tune on.
constexpr std::size_t kMostDistrustedWorkers = 3;

// An answer failed its checks (unreadable, over its cap, a placement that is not one, a makespan
// its placement does not have): it is dropped and its worker gets no more tasks (the pool's
// distrust), and the job goes on, unless the answer names no worker or its worker is the
// kMostDistrustedWorkers-th. Returns whether the job goes on.
bool refuse_answer(caf::stateful_actor<TunerState>* self, const std::string& worker, const std::string& why) {
  TunerState& s = self->state;
  if (!worker.empty()) {
    s.distrusted.insert(worker);
    self->send(s.config.pool, distrust_atom::value, worker, why);
  }
  if (worker.empty() || s.distrusted.size() >= kMostDistrustedWorkers) {
    fail(self, why + (worker.empty() ? std::string() : " (answers of " + std::to_string(s.distrusted.size()) + " workers failed their checks)"));
    return false;
  }
  return true;  // the pool says it ("worker W gets no more tasks until it restarts: why")
}

// A worker's claimed best, checked before it becomes the job's (and the store's): its placement
// must place this graph on this cluster and simulate here to the makespan claimed. A faulty
// worker, or one of another simulator version, would otherwise store a best that no later true
// result could replace (the store keeps only strictly faster ones).
Status check_claim(TunerState& s, const Placement& placement, double claimed, const std::string& what) {
  const BuiltProblem& p = *s.config.problem;
  if (Status ok = placement.check(p.graph, p.cluster, what); !ok) return ok;
  if (!s.simulator) s.simulator = std::make_unique<Simulator>(p.graph, *p.costs, p.cluster, p.sim);
  const double here = s.simulator->makespan(placement);
  if (!(std::abs(here - claimed) <= 1e-9 * std::max(1.0, std::abs(here)))) {
    char text[160];
    std::snprintf(text, sizeof text, " claims a makespan of %.9g, which its placement does not have here (%.9g)", claimed, here);
    return make_error(what + text + ": a worker of another simulator version, or a faulty one");
  }
  return Ok{};
}

void store_best(caf::stateful_actor<TunerState>* self) {
  self->request(self->state.config.store, kStoreTimeout, put_best_atom::value, record_of(self->state))
      .then(
          [=](const StoreReply& reply) {
            if (!reply.ok) fail(self, "storing the best failed: " + reply.error);
          },
          [=](const caf::error& e) { fail(self, "the store did not answer: " + self->system().render(e)); });
}

void finish(caf::stateful_actor<TunerState>* self) {
  TunerState& s = self->state;
  s.outcome.seconds = elapsed(s);
  if (s.outcome.stop_reason.empty()) s.outcome.stop_reason = stop_reason(s);
  if (!s.failure.empty()) {
    s.outcome.state = JobState::failed;
    s.outcome.stop_reason = s.failure;
  } else if (s.cancelled) {
    s.outcome.state = JobState::cancelled;
    s.outcome.stop_reason = "cancelled";
  } else {
    s.outcome.state = JobState::complete;
  }
  // The store serves a sender's messages in order: once the sync answers, every write is in
  // (and every put_best has answered, so a failed one has already marked the job).
  auto deliver = [=] {
    TunerState& st = self->state;
    if (!st.failure.empty()) {
      st.outcome.state = JobState::failed;
      st.outcome.stop_reason = st.failure;
    }
    st.done.deliver(st.outcome);
    self->quit();
  };
  self->request(s.config.store, kStoreTimeout, sync_atom::value)
      .then([=](const StoreReply&) { deliver(); }, [=](const caf::error&) { deliver(); });
}

void dispatch(caf::stateful_actor<TunerState>* self, int chain);
void withdraw(caf::stateful_actor<TunerState>* self);

// Keeps one batch in flight per chain while there are evaluations to hand out; when the job must
// stop, takes its queued batches back from the pool and finishes once nothing is outstanding.
void keep_busy(caf::stateful_actor<TunerState>* self) {
  TunerState& s = self->state;
  if (!s.started) return;
  if (!s.stopping) {
    const std::string reason = stop_reason(s);
    if (!reason.empty()) {
      s.stopping = true;
      s.outcome.stop_reason = reason;
    }
  }
  if (s.chains.size() < static_cast<std::size_t>(s.width)) s.chains.resize(s.width);
  for (int c = 0; c < s.width && !s.stopping && unpromised(s) > 0; ++c)
    if (!s.chains[c].busy) dispatch(self, c);
  // A time budget, a cancellation or a failure does not wait for batches no slot has taken yet; an
  // evaluation budget does (its batches are the budget).
  if (s.stopping && s.outstanding > 0) withdraw(self);
  if (s.outstanding == 0 && (s.stopping || unpromised(s) == 0)) {
    if (!s.stopping) s.outcome.stop_reason = stop_reason(s);
    finish(self);
  }
}

// A batch is back (answered, withdrawn or failed): its chain is free and its cap no longer promised.
void batch_returned(TunerState& s, int chain, long cap) {
  --s.outstanding;
  s.chains[chain].busy = false;
  s.promised -= cap;
}

void on_batch(caf::stateful_actor<TunerState>* self, int chain, long sequence, long cap, const TaskResult& answer) {
  TunerState& s = self->state;
  batch_returned(s, chain, cap);
  if (answer.withdrawn) return keep_busy(self);
  s.outcome.rollout_seconds += answer.seconds;
  auto decoded = decode_batch_result(answer.body);
  if (!decoded) {
    refuse_answer(self, answer.worker, "batch " + std::to_string(sequence) + " from " + answer.worker + ": " + decoded.error().message);
    return keep_busy(self);
  }
  const BatchResult& batch = decoded.value();
  const std::string from = "batch " + std::to_string(sequence) + " from " + answer.worker;
  Status valid = Ok{};
  if (cap > 0 && batch.evaluations > cap)  // a cap of 0: the batch runs for its seconds
    valid = make_error(from + " ran " + std::to_string(batch.evaluations) + " evaluations, over its cap of " + std::to_string(cap));
  if (valid) valid = batch.last.check(s.config.problem->graph, s.config.problem->cluster, from + ": its last placement");
  if (valid && batch.best_makespan < s.outcome.best.makespan) valid = check_claim(s, batch.best, batch.best_makespan, from);
  if (!valid) {
    refuse_answer(self, answer.worker, valid.error().message);
    return keep_busy(self);
  }
  s.chains[chain].last = batch.last;
  ++s.outcome.batches;
  s.outcome.evaluations += batch.evaluations;
  EpisodeRecord episode{s.config.job_id, static_cast<std::uint64_t>(sequence), chain,
                        batch.evaluations, batch.best_makespan, batch.mean_makespan, unix_now()};
  if (s.config.record_episodes) self->send(s.config.store, put_episode_atom::value, episode);
  if (batch.best_makespan < s.outcome.best.makespan) {
    s.outcome.best.placement = batch.best;
    s.outcome.best.makespan = batch.best_makespan;
    s.outcome.best.method = "search";
    s.outcome.best.evaluations = s.outcome.evaluations;
    s.last_improvement = elapsed(s);
    store_best(self);
    report(s, TuneProgress::Kind::improvement);
  } else {
    report(s, TuneProgress::Kind::tick);
  }
  keep_busy(self);
}

void dispatch(caf::stateful_actor<TunerState>* self, int c) {
  TunerState& s = self->state;
  const JobSpec& o = s.config.spec;
  TunerState::Chain& chain = s.chains[c];
  const long sequence = s.next_sequence++;
  BatchRequest request;
  request.seed = o.seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(sequence);
  // A batch runs `batch_evaluations` (reproducible runs) or `batch_seconds`; under an evaluation
  // budget it never gets more than the budget has left, so the job's total is the budget exactly.
  // Caps of the form 1 + 32k are what a search batch stops on by itself.
  request.seconds = o.batch_evaluations > 0 ? 0 : o.batch_seconds;
  // Nor past the time budget: a running batch runs to its end, so a longer one ran the job over
  // its budget by up to a batch (and kept a cancel waiting as long).
  if (request.seconds > 0 && o.budget_seconds > 0)
    request.seconds = std::max(kShortestBatch, std::min(request.seconds, o.budget_seconds - elapsed(s)));
  request.evaluations = o.batch_evaluations;
  if (o.budget_evaluations > 0) {
    long cap = o.batch_evaluations;
    if (cap <= 0) cap = 1 + 32 * std::max(1L, o.budget_evaluations / (static_cast<long>(s.width) * 8 * 32));
    request.evaluations = std::min(cap, unpromised(s));
  }
  const long cap = request.evaluations;
  s.promised += cap;
  request.fail_times = sequence == o.fail_batch ? o.fail_times : 0;
  // Each chain anneals across its batches, cooling with the budget used (the schedule of
  // `place --method search`, T from 0.02 to 2e-4); every eighth batch of a chain restarts it from
  // the global best, so good regions are shared without collapsing all chains onto one.
  const long round = chain.rounds++;
  const double now = budget_fraction(s);
  double step = 0.02;  // share of the budget one batch uses
  if (o.budget_seconds > 0) step = o.batch_seconds / o.budget_seconds;
  if (o.budget_evaluations > 0 && request.evaluations > 0)
    step = static_cast<double>(request.evaluations) / o.budget_evaluations;
  request.t_start = 0.02 * std::pow(0.01, now);
  request.t_end = 0.02 * std::pow(0.01, std::min(1.0, now + step));
  const bool restart = round % 8 == 0 || chain.last.size() == 0;
  request.start = restart ? s.outcome.best.placement : chain.last;
  request.perturb = round % 16 == 8 ? 0.05 : 0.0;  // every other restart: a random kick away from the best
  ++s.outstanding;
  chain.busy = true;
  RolloutTask task{kAnnealTask, s.config.problem->key, encode_body(request), request.seconds, sequence, 0};
  // No deadline here: the pool owns the deadlines (leases), re-queues what a lost worker held and
  // answers every task once, with a result, `withdrawn`, or an error when the task keeps failing.
  self->request(s.config.pool, caf::infinite, run_task_atom::value, s.config.job_id, o.priority, std::move(task))
      .then([=](const TaskResult& answer) { on_batch(self, c, sequence, cap, answer); },
            [=](const caf::error& e) {
              batch_returned(self->state, c, cap);
              fail(self, "a batch failed: " + error_text(self->system(), e));
              keep_busy(self);
            });
}

// The pool's slot count sets how many chains run; asked at start and on every tick, so a job
// grows onto workers that join and does not queue more than the pool can run.
void refresh_width(caf::stateful_actor<TunerState>* self) {
  self->request(self->state.config.pool, caf::infinite, slots_atom::value, std::string(kAnnealTask))
      .then([=](int slots) {
              TunerState& st = self->state;
              const int cap = st.config.spec.parallelism;
              st.width = std::max(1, cap > 0 ? std::min(cap, slots) : slots);
              if (cap > 0 && slots == 0) st.width = cap;  // no worker yet: queue what one will take
              keep_busy(self);
            },
            [=](const caf::error&) {});
}

// The search starts once the job has a best to start from: the stored one, the heuristics', or both.
void begin_search(caf::stateful_actor<TunerState>* self) {
  TunerState& s = self->state;
  if (s.outcome.best.placement.size() == 0) {  // the heuristics never ran, and nothing was stored
    if (s.failure.empty() && !s.cancelled)
      fail(self, "no worker ran the job's heuristics before its budget ran out");
    s.outcome.best.makespan = 0;
    return finish(self);
  }
  store_best(self);
  s.started = true;
  s.last_improvement = elapsed(s);  // patience counts from here, not from a wait for a worker
  refresh_width(self);
}

// Episode 0: the heuristics, cheapest first, under the job's budgets, as a `place` task on a
// worker (not on this scheduler's threads: they take seconds on large graphs). Their evaluations
// count toward the job's, so its episodes add up to every evaluation it committed. They replace
// a stored best that is not better.
void run_heuristics(caf::stateful_actor<TunerState>* self) {
  TunerState& s = self->state;
  const JobSpec& o = s.config.spec;
  if ((o.budget_seconds > 0 && elapsed(s) >= o.budget_seconds) || (o.budget_evaluations > 0 && unpromised(s) == 0))
    return begin_search(self);  // the budget is spent (a resumed job): a budget of 0 would mean none
  PlaceRequest request;
  request.method = "heuristics";
  request.seed = s.config.spec.seed;
  // What the budget has left, up to a year (a task's longest time: a longer budget has a year's horizon).
  request.seconds = s.config.spec.budget_seconds > 0 ? std::clamp(s.config.spec.budget_seconds - elapsed(s), 0.0, kLongestWait) : 0;
  request.evaluations = s.config.spec.budget_evaluations > 0 ? unpromised(s) : 0;
  s.heuristics_pending = true;
  RolloutTask task{kPlaceTask, s.config.problem->key, encode_body(request), request.seconds, 0, 0};
  // A refused answer runs the heuristics again (on another worker: its own gets no more tasks).
  const auto refused = [=](const std::string& worker, const std::string& why) {
    self->state.heuristics_pending = false;
    if (refuse_answer(self, worker, why)) return run_heuristics(self);
    begin_search(self);
  };
  auto done = [=](const std::string& failure, const PlacementOutcome* heuristics, const std::string& worker) {
    TunerState& st = self->state;
    st.heuristics_pending = false;
    if (!failure.empty()) fail(self, failure);
    if (heuristics) {
      if (Status valid = check_claim(st, heuristics->placement, heuristics->makespan, "the heuristics' result from " + worker); !valid)
        return refused(worker, valid.error().message);
      st.outcome.evaluations += heuristics->evaluations;
      st.outcome.heuristic_evaluations = heuristics->evaluations;
      st.outcome.heuristic_seconds = elapsed(st);
      st.outcome.best_heuristic = heuristics->method;
      st.outcome.heuristic_makespan = heuristics->makespan;
      if (st.outcome.best.placement.size() == 0 || heuristics->makespan <= st.outcome.best.makespan) {
        st.outcome.best = *heuristics;
        report(st, TuneProgress::Kind::improvement);
      }
      if (st.config.record_episodes)
        self->send(st.config.store, put_episode_atom::value,
                   EpisodeRecord{st.config.job_id, 0, -1, heuristics->evaluations, heuristics->makespan,
                                 heuristics->makespan, unix_now()});
    }
    begin_search(self);
  };
  self->request(s.config.pool, caf::infinite, run_task_atom::value, s.config.job_id, s.config.spec.priority, std::move(task))
      .then(
          [=](const TaskResult& answer) {
            if (answer.withdrawn) return done("", nullptr, "");
            self->state.outcome.rollout_seconds += answer.seconds;
            auto outcome = decode_place_result(answer.body);
            if (!outcome) return refused(answer.worker, "the heuristics from " + answer.worker + ": " + outcome.error().message);
            done("", &outcome.value(), answer.worker);
          },
          [=](const caf::error& e) { done("the heuristics failed: " + error_text(self->system(), e), nullptr, ""); });
}

// Takes back what the job has queued and not started (a cancelled job, a spent budget). Sent on
// every pass while batches are outstanding, not once: a leased batch that the pool queues again
// after a withdrawal (its worker lost, its lease expired) must come back too, or the job would
// wait for a slot that may never run it.
void withdraw(caf::stateful_actor<TunerState>* self) {
  TunerState& s = self->state;
  self->send(s.config.pool, withdraw_atom::value, s.config.job_id);
}

caf::behavior tuner_actor(caf::stateful_actor<TunerState>* self, TunerConfig config) {
  self->state.config = std::move(config);
  return {
      [=](start_atom) {
        TunerState& s = self->state;
        const TunerConfig::Resume& resume = s.config.resume;
        s.done = self->make_response_promise();
        // The budgets cover the heuristics too, and a resumed job's earlier run.
        s.begin = std::chrono::steady_clock::now() -
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(resume.seconds));
        s.outcome.job_id = s.config.job_id;
        s.outcome.graph = s.config.graph;
        s.outcome.runtime = s.config.runtime;
        s.outcome.evaluations = resume.evaluations;
        if (resume.active) s.next_sequence = resume.next_sequence;
        auto with_stored = [=](const StoredBest& stored) {
          TunerState& st = self->state;
          const BuiltProblem& built = *st.config.problem;
          if (!stored.error.empty())
            log_line("gantry: cannot read the stored best, starting without it: " + stored.error);
          const Status fits = stored.found ? stored.record.placement.check(built.graph, built.cluster, "stored best")
                                           : Status(Ok{});
          if (!fits) log_line("gantry: ignoring the stored best: " + fits.error().message);
          const bool usable = stored.found && fits;
          if (usable) {
            const double makespan = evaluate_placement(built.placement(), stored.record.placement);
            st.outcome.resumed = true;
            st.outcome.resumed_makespan = makespan;
            st.outcome.best.placement = stored.record.placement;
            st.outcome.best.makespan = makespan;
            st.outcome.best.method = "stored:" + stored.record.method;
            report(st, TuneProgress::Kind::improvement);
          }
          // A resumed job's heuristics ran in its earlier life: their result is the stored best.
          if (st.config.resume.active && usable) begin_search(self);
          else run_heuristics(self);
        };
        self->request(s.config.store, kStoreTimeout, get_best_atom::value, s.config.graph, s.config.runtime)
            .then(with_stored, [=](const caf::error& e) { with_stored(StoredBest{false, {}, self->system().render(e)}); });
        if (s.config.timers) self->delayed_send(self, std::chrono::milliseconds(250), tick_atom::value);
        return s.done;
      },
      [=](cancel_atom) {
        self->state.cancelled = true;
        if (self->state.heuristics_pending) withdraw(self);  // no worker may have taken them yet
        keep_busy(self);
      },
      [=](tick_atom) {  // budgets, patience and cancellation are noticed even while no batch returns
        TunerState& s = self->state;
        if (s.heuristics_pending && must_stop_before_search(s)) withdraw(self);
        refresh_width(self);
        self->delayed_send(self, std::chrono::milliseconds(250), tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_tuner(caf::actor_system& system, TunerConfig config) {
  return system.spawn(tuner_actor, std::move(config));
}

}  // namespace gantry
