#include "actors/tuner_actor.hpp"

#include <chrono>
#include <map>
#include <cmath>

#include "actors/messages.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"

namespace gantry {

struct TunerState {
  TunerConfig config;
  std::chrono::steady_clock::time_point begin;
  TuneOutcome outcome;
  double last_improvement = 0, last_tick = -1;
  long outstanding = 0, next_sequence = 0;
  std::map<caf::actor_id, long> batches_of;  // batches handed to each rollout
  bool stopping = false;
  caf::response_promise done;
  static inline const char* name = "tuner";
};

namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double elapsed(const TunerState& s) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - s.begin).count();
}

double budget_fraction(const TunerState& s) {
  const TuneOptions& o = *s.config.options;
  double f = 0;
  if (o.budget_seconds > 0) f = elapsed(s) / o.budget_seconds;
  if (o.budget_evaluations > 0) f = std::max(f, static_cast<double>(s.outcome.evaluations) / o.budget_evaluations);
  return std::min(1.0, f);
}

bool should_stop(const TunerState& s) {
  const TuneOptions& o = *s.config.options;
  if (o.cancel && o.cancel->load()) return true;
  if (budget_fraction(s) >= 1.0) return true;
  if (o.patience_seconds > 0 && elapsed(s) - s.last_improvement > o.patience_seconds) return true;
  return o.budget_seconds <= 0 && o.budget_evaluations <= 0 && o.patience_seconds <= 0;  // no budget: stop
}

void report(TunerState& s, TuneProgress::Kind kind) {
  const TuneOptions& o = *s.config.options;
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
  r.graph_label = c.problem->graph_label;
  r.cluster_name = c.problem->cluster.name();
  r.method = s.outcome.best.method;
  r.sim = runtime_name(c.problem->sim);
  r.unit = c.problem->graph.cost_unit();
  r.makespan = s.outcome.best.makespan;
  r.lower_bound = makespan_lower_bound(c.problem->graph, c.problem->costs, c.problem->cluster, c.problem->sim);
  r.placement = s.outcome.best.placement;
  r.job_id = c.job_id;
  r.found_at = unix_now();
  r.evaluations = s.outcome.evaluations;
  return r;
}

void store_best(caf::stateful_actor<TunerState>* self) {
  self->request(self->state.config.store, caf::infinite, put_best_atom::value, record_of(self->state))
      .then([=](const StoreReply& reply) {
              if (!reply.ok) caf::aout(self) << "gantry: storing the best failed: " << reply.error << "\n";
            },
            [=](const caf::error& e) {
              caf::aout(self) << "gantry: the store did not answer: " << self->system().render(e) << "\n";
            });
}

void finish(caf::stateful_actor<TunerState>* self) {
  TunerState& s = self->state;
  s.outcome.seconds = elapsed(s);
  const TuneOptions& o = *s.config.options;
  s.outcome.state = o.cancel && o.cancel->load() ? JobState::cancelled : JobState::complete;
  // The store serves a sender's messages in order: once the sync answers, every write is in.
  auto deliver = [=] {
    self->state.done.deliver(self->state.outcome);
    self->quit();
  };
  self->request(s.config.store, caf::infinite, sync_atom::value)
      .then([=](const StoreReply&) { deliver(); }, [=](const caf::error&) { deliver(); });
}

void dispatch(caf::stateful_actor<TunerState>* self, const caf::actor& rollout);

void on_batch(caf::stateful_actor<TunerState>* self, const caf::actor& rollout, const BatchResult& batch) {
  TunerState& s = self->state;
  --s.outstanding;
  ++s.outcome.batches;
  s.outcome.evaluations += batch.result.evaluations;
  EpisodeRecord episode{s.config.job_id, static_cast<std::uint64_t>(batch.sequence), batch.rollout,
                        batch.result.evaluations, batch.result.best_makespan, batch.result.mean_makespan, unix_now()};
  self->send(s.config.store, put_episode_atom::value, episode);
  if (batch.result.best_makespan < s.outcome.best.makespan) {
    s.outcome.best.placement = batch.result.best;
    s.outcome.best.makespan = batch.result.best_makespan;
    s.outcome.best.method = "search";
    s.outcome.best.evaluations = s.outcome.evaluations;
    s.last_improvement = elapsed(s);
    store_best(self);
    report(s, TuneProgress::Kind::improvement);
  } else {
    report(s, TuneProgress::Kind::tick);
  }
  if (!s.stopping && should_stop(s)) s.stopping = true;
  if (!s.stopping)
    dispatch(self, rollout);
  else if (s.outstanding == 0)
    finish(self);
}

void dispatch(caf::stateful_actor<TunerState>* self, const caf::actor& rollout) {
  TunerState& s = self->state;
  const TuneOptions& o = *s.config.options;
  BatchRequest request;
  request.sequence = s.next_sequence++;
  request.seed = o.seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(request.sequence);
  request.start = s.outcome.best.placement;
  request.evaluations = o.batch_evaluations;
  request.seconds = o.batch_seconds;
  // Each rollout runs one annealing chain across its batches, cooling with the budget used (the
  // schedule of `place --method search`, T from 0.02 to 2e-4); every eighth batch of a rollout
  // restarts its chain from the global best, so good regions are shared without collapsing all
  // chains onto one.
  const long round = s.batches_of[rollout.id()]++;
  const double now = budget_fraction(s);
  double step = 0.02;  // share of the budget one batch uses
  if (o.budget_seconds > 0) step = o.batch_seconds / o.budget_seconds;
  if (o.budget_evaluations > 0 && o.batch_evaluations > 0)
    step = static_cast<double>(o.batch_evaluations) / o.budget_evaluations;
  request.t_start = 0.02 * std::pow(0.01, now);
  request.t_end = 0.02 * std::pow(0.01, std::min(1.0, now + step));
  request.continue_chain = round % 8 != 0;
  request.perturb = round % 16 == 8 ? 0.05 : 0.0;  // every other restart: a random kick away from the best
  ++s.outstanding;
  self->request(rollout, caf::infinite, batch_atom::value, std::move(request))
      .then([=](const BatchResult& batch) { on_batch(self, rollout, batch); },
            [=](const caf::error& e) {
              --self->state.outstanding;
              caf::aout(self) << "gantry: a rollout failed: " << self->system().render(e) << "\n";
              if (self->state.outstanding == 0) finish(self);
            });
}

}  // namespace

namespace {
caf::behavior tuner_actor(caf::stateful_actor<TunerState>* self, TunerConfig config) {
  self->state.config = std::move(config);
  return {
      [=](start_atom) {
        TunerState& s = self->state;
        s.done = self->make_response_promise();
        s.begin = std::chrono::steady_clock::now();
        s.outcome.job_id = s.config.job_id;
        s.outcome.graph = s.config.graph;
        s.outcome.runtime = s.config.runtime;
        SearchBudget heuristics;
        heuristics.seed = s.config.options->seed;
        s.outcome.best = best_heuristic(*s.config.placement_problem, heuristics);
        s.outcome.evaluations = s.outcome.best.evaluations;
        s.outcome.best_heuristic = s.outcome.best.method;
        s.outcome.heuristic_makespan = s.outcome.best.makespan;
        report(s, TuneProgress::Kind::improvement);
        // Resume: a best already stored for this graph and runtime is the starting point if better.
        auto resume = [=](const StoredBest& stored) {
              TunerState& st = self->state;
              if (!stored.error.empty())
                caf::aout(self) << "gantry: cannot read the stored best, starting without it: " << stored.error << "\n";
              const Status fits = stored.found ? stored.record.placement.check(st.config.problem->graph,
                                                                               st.config.problem->cluster, "stored best")
                                               : Status(Ok{});
              if (!fits) caf::aout(self) << "gantry: ignoring the stored best: " << fits.error().message << "\n";
              if (stored.found && fits) {
                const double makespan = evaluate_placement(*st.config.placement_problem, stored.record.placement);
                st.outcome.resumed = true;
                st.outcome.resumed_makespan = makespan;
                if (makespan < st.outcome.best.makespan) {
                  st.outcome.best.placement = stored.record.placement;
                  st.outcome.best.makespan = makespan;
                  st.outcome.best.method = "stored:" + stored.record.method;
                  report(st, TuneProgress::Kind::improvement);
                }
              }
              store_best(self);
              if (should_stop(st) || st.config.rollouts.empty()) {
                finish(self);
                return;
              }
              for (const caf::actor& rollout : st.config.rollouts) dispatch(self, rollout);
            };
        self->request(s.config.store, caf::infinite, get_best_atom::value, s.config.graph, s.config.runtime)
            .then(resume, [=](const caf::error& e) { resume(StoredBest{false, {}, self->system().render(e)}); });
        return s.done;
      },
  };
}
}  // namespace

caf::actor spawn_tuner(caf::actor_system& system, TunerConfig config) {
  return system.spawn(tuner_actor, std::move(config));
}

}  // namespace gantry
