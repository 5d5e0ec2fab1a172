#include <algorithm>
#include <chrono>
#include <limits>

#include "actors/background_improvement.hpp"
#include "actors/coordinator_state.hpp"
#include "actors/log_line.hpp"
#include "actors/off_thread.hpp"
#include "core/unix_time.hpp"
#include "storage/store.hpp"

namespace gantry::coordinator_detail {

namespace {

// Background improvement (options.improve_seconds > 0): a tick every 2 s; once no client job has
// been queued or running for options.improve_after seconds, one stored problem is tuned again
// (actors/background_improvement.hpp), one run at a time and at most one per improve_seconds,
// while the cluster stays idle.
constexpr auto kImprovementTick = std::chrono::seconds(2);
constexpr std::size_t kImprovementTries = 20;  // stored jobs asked for their spec per attempt

bool clients_busy(const CoordinatorState& s) {
  const auto client = [](const Job& j) { return !j.background(); };
  return s.submits_preparing > 0 || s.recovering > 0 || !s.recording.empty() || !s.before_keys.empty() ||
         std::any_of(s.queue.begin(), s.queue.end(), client) ||
         std::any_of(s.running.begin(), s.running.end(), [&](const auto& entry) { return client(entry.second); });
}

// No run started: another try after another idle stretch (quietly when there was nothing to run).
void improvement_not_started(Self self, const std::string& why) {
  if (!why.empty()) log_line("gantry: no background improvement: " + why);
  self->state.improving = false;
  self->state.clients_last_seen = unix_now();
}

void improve_from(Self self, const std::vector<std::string>& ids, std::size_t i, std::size_t asked);

// Job ids[i] cannot run again (no stored spec, one that does not read, is not a tuning job or
// fails its checks): noted, with why when there is more to say than that it has no stored spec,
// and the next one tried.
void skip_source(Self self, const std::vector<std::string>& ids, std::size_t i, std::size_t asked, const std::string& why) {
  if (!why.empty()) log_line("gantry: background improvement skips job " + ids[i] + ": " + why);
  self->state.unfit_sources.insert(ids[i]);
  improve_from(self, ids, i + 1, asked);
}

// Job ids[i] did not start for a reason that may pass (the store, a thread, the problem's build):
// no run this time; the third such failure makes it unfit, so that it cannot hold the turns.
void source_failed(Self self, const std::string& id, const std::string& why) {
  CoordinatorState& s = self->state;
  if (++s.source_failures[id] >= 3) {
    s.unfit_sources.insert(id);
    s.source_failures.erase(id);
    return improvement_not_started(self, "job " + id + ": " + why + " (the third time: it is skipped from now on)");
  }
  improvement_not_started(self, "job " + id + ": " + why);
}

void start_improvement(Self self, JobSpec spec, const std::vector<std::string>& ids, std::size_t i, std::size_t asked) {
  CoordinatorState& s = self->state;
  const std::string source = ids[i];
  spec.budget_seconds = s.options.improve_seconds;
  spec.budget_evaluations = 0;
  spec.patience_seconds = 0;
  spec.priority = std::numeric_limits<int>::min();
  // Each run searches on from the same best another way (runs start seconds apart), also after a restart.
  spec.seed += static_cast<std::uint64_t>(unix_now() * 1000);
  spec.fail_batch = -1;
  if (Status ok = check_spec(spec); !ok) return skip_source(self, ids, i, asked, "its spec: " + ok.error().message);
  ProblemCache* cache = s.options.cache;
  // Not durable: the run stores no copy of its spec (its source job keeps one), and a restart
  // does not resume it (the next idle stretch starts another).
  off_thread<PreparedJob>(self, [spec = std::move(spec), cache]() mutable { return prepare_job(std::move(spec), cache, false, {}); },
                          [=](Result<PreparedJob> prepared) {
    if (!prepared) return source_failed(self, source, prepared.error().message);
    CoordinatorState& st = self->state;
    // A client's job came meanwhile (it may even have ended: the idle time starts again).
    if (clients_busy(st) || unix_now() - st.clients_last_seen < st.options.improve_after)
      return improvement_not_started(self, "");
    self->state.source_failures.erase(source);
    Job job = make_job(self, std::move(prepared).value(), {});
    job.background_of = source;
    // As a resumed job: the heuristics' result is in the stored best, so the whole budget searches
    // on from it (a job without a usable stored best runs them).
    job.resume.active = true;
    job.record.improves = source;
    job.record.message = record_message(job, "");
    self->state.improving_id = job.id;
    self->state.improvement_started = unix_now();
    log_line("gantry: job " + job.id + ": " + job.record.message + " (" + job.record.graph_label + " on " +
             job.record.cluster_name + ", " + std::to_string(static_cast<long>(job.spec.budget_seconds)) +
             " s from its stored best; a submitted job stops it)");
    put_job(self, job.record);
    admit(self, std::move(job));
  });
}

// The first of ids[i..] that can run again (at most kImprovementTries store reads per attempt;
// the unfit are remembered, so the next attempt goes further).
void improve_from(Self self, const std::vector<std::string>& ids, std::size_t i, std::size_t asked) {
  const auto& unfit = self->state.unfit_sources;
  while (i < ids.size() && unfit.count(ids[i]) > 0) ++i;
  if (i >= ids.size() || asked >= kImprovementTries) return improvement_not_started(self, "");
  self->request(self->state.store, kStoreTimeout, get_job_atom::value, ids[i])
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) return source_failed(self, ids[i], stored.error);
            if (stored.jobs.empty() || stored.jobs.front().spec.empty()) return skip_source(self, ids, i, asked + 1, "");
            auto spec = wire::parse_job_spec_text(stored.jobs.front().spec);
            if (spec) spec = stored_spec(std::move(spec).value());
            if (!spec) return skip_source(self, ids, i, asked + 1, "its spec: " + spec.error().message);
            if (spec.value().kind != "tune" && spec.value().kind != "pipeline")
              return skip_source(self, ids, i, asked + 1, "its spec is a " + spec.value().kind + " job");
            const JobRecord& source = stored.jobs.front();
            self->request(self->state.store, kStoreTimeout, get_best_atom::value, source.graph, source.cluster)
                .then(
                    [=, spec = std::move(spec).value()](const StoredBest& best) mutable {
                      if (!best.error.empty()) return source_failed(self, ids[i], best.error);
                      if (best.found && at_lower_bound(best.record))
                        return skip_source(self, ids, i, asked + 1, "its problem's stored best is at its lower bound");
                      start_improvement(self, std::move(spec), ids, i, asked + 1);
                    },
                    [=](const caf::error& e) { improvement_not_started(self, "the store did not answer: " + error_text(self->system(), e)); });
          },
          [=](const caf::error& e) { improvement_not_started(self, "the store did not answer: " + error_text(self->system(), e)); });
}

}  // namespace

// Keeps the newest options.improve_keep background runs of a problem in the store: an idle
// cluster makes one per --improve duration, for months.
void drop_old_background_runs(Self self, const Fingerprint& graph, const Fingerprint& runtime) {
  const auto failed = [=](const std::string& why) { log_line("gantry: old background runs not dropped: " + why); };
  self->request(self->state.store, kStoreTimeout, get_jobs_atom::value, false)
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) return failed(stored.error);
            std::vector<std::string> old = background_runs_beyond(
                stored.jobs, graph, runtime, static_cast<std::size_t>(self->state.options.improve_keep));
            if (old.empty()) return;
            self->request(self->state.store, kStoreTimeout, drop_jobs_atom::value, std::move(old))
                .then([=](const StoreReply& reply) { if (!reply.ok) failed(reply.error); },
                      [=](const caf::error& e) { failed(error_text(self->system(), e)); });
          },
          [=](const caf::error& e) { failed(error_text(self->system(), e)); });
}

void improvement_tick(Self self) {
  CoordinatorState& s = self->state;
  self->delayed_send(self, kImprovementTick, improve_atom::value);
  const double now = unix_now();
  if (clients_busy(s)) s.clients_last_seen = now;
  // One run per duration at most: a search that converges early (a pipeline tune often does) must
  // not turn an idle cluster into a job record every tick.
  if (s.improving || now - s.clients_last_seen < s.options.improve_after ||
      now - s.improvement_started < s.options.improve_seconds)
    return;
  s.improving = true;
  self->request(s.store, kStoreTimeout, get_jobs_atom::value, false)
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) return improvement_not_started(self, "cannot list the stored jobs: " + stored.error);
            improve_from(self, improvement_order(stored.jobs), 0, 0);
          },
          [=](const caf::error& e) { improvement_not_started(self, "the store did not answer: " + error_text(self->system(), e)); });
}

}  // namespace gantry::coordinator_detail
