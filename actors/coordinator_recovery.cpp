#include <unistd.h>

#include "actors/coordinator_state.hpp"
#include "actors/log_line.hpp"
#include "actors/off_thread.hpp"
#include "core/host_name.hpp"
#include "storage/store.hpp"

namespace gantry::coordinator_detail {

// The submit keys of the stored jobs, read once at start; the keyed submits that came meanwhile
// then go on. A store that cannot list its jobs leaves the keys of this run only.
void read_submit_keys(Self self) {
  const auto go_on = [=] {
    CoordinatorState& s = self->state;
    s.keys_read = true;
    auto waiting = std::move(s.before_keys);
    for (const auto& [gateway, peer, request] : waiting) submit_durable(self, gateway, peer, request);
  };
  // No timeout: a slow listing of a large store must not leave the stored keys unread.
  self->request(self->state.store, caf::infinite, get_jobs_atom::value, false)
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) log_line("gantry: cannot read the stored jobs' submit keys: " + stored.error);
            for (const JobRecord& record : stored.jobs)
              if (!record.submit_key.empty()) self->state.submitted[record.submit_key] = record.id;
            go_on();
          },
          [=](const caf::error& e) {
            log_line("gantry: cannot read the stored jobs' submit keys: " + error_text(self->system(), e));
            go_on();
          });
}

namespace {

// Queues an interrupted job again, to go on from its stored episodes and best.
void resume(Self self, const JobRecord& record, const PreparedJob& prepared) {
  const JobSpec spec = prepared.spec;
  const auto problem = prepared.problem;
  self->request(self->state.store, kStoreTimeout, tally_atom::value, record.id)
      .then([=](const EpisodeTally& tally) {
        if (!tally.error.empty()) return log_line("gantry: job " + record.id + " cannot be resumed: " + tally.error);
        Job job;
        job.id = record.id;
        job.spec = spec;
        job.problem = problem;
        job.order = self->state.next_order++;
        job.record = record;
        job.record.spec.clear();  // it stays stored
        job.durable = true;
        job.record.state = JobState::queued;
        job.record.owner_pid = static_cast<long>(getpid());
        job.record.owner_host = host_name();
        job.record.message = "resumed after a coordinator restart";
        job.resume.active = tally.episodes > 0;
        job.resume.evaluations = tally.evaluations;
        job.resume.next_sequence = tally.last_sequence + 1;
        job.resume.seconds = record.started > 0 && tally.last_time > record.started ? tally.last_time - record.started : 0;
        log_line("gantry: job " + record.id +
                 (spec.kind == "train"      ? " run again from its spec (from its checkpoint, if it left one)"
                  : spec.kind == "pipeline" ? " run again from its spec, from its stored best"
                                            : " resumed (" + std::to_string(tally.evaluations) + " evaluations done before)"));
        put_job(self, job.record);
        enqueue(self, std::move(job));
        start_next(self);
      },
      [=](const caf::error& e) {
        log_line("gantry: job " + record.id + " cannot be resumed: the store did not answer: " + error_text(self->system(), e));
      });
}

// The interrupted jobs' problems, built in their stored order (off the coordinator's thread).
using Recovered = std::vector<std::pair<JobRecord, Result<PreparedJob>>>;
Result<Recovered> rebuild(const std::vector<JobRecord>& records, ProblemCache* cache) {
  Recovered out;
  for (const JobRecord& record : records) {
    auto spec = wire::parse_job_spec_text(record.spec);
    if (!spec) out.emplace_back(record, spec.error());
    else out.emplace_back(record, prepare_job(std::move(spec).value(), cache, /*durable=*/false, {}));  // its spec is stored
  }
  return out;
}

}  // namespace

// After a restart: the jobs the previous coordinator was running or had queued (the store marked
// them INTERRUPTED when this one opened it) go back to the queue, each to go on from its stored
// episodes and best.
void recover(Self self) {
  ++self->state.recovering;  // the cluster is not idle while they are rebuilt (background improvement)
  const auto done = [=](const std::string& error) {
    --self->state.recovering;
    if (!error.empty()) log_line(error);
  };
  self->request(self->state.store, kStoreTimeout, get_jobs_atom::value, true).then([=](const StoredJobs& stored) {
    if (!stored.error.empty()) return done("gantry: cannot read the stored jobs, none resumed: " + stored.error);
    std::vector<JobRecord> interrupted;
    for (const JobRecord& record : stored.jobs)
      if (record.state == JobState::interrupted && !record.spec.empty()) interrupted.push_back(record);
    if (interrupted.empty()) return done("");
    ProblemCache* cache = self->state.options.cache;
    off_thread<Recovered>(self, [interrupted, cache] { return rebuild(interrupted, cache); }, [=](Result<Recovered> recovered) {
      if (!recovered) return done("gantry: no job resumed: " + recovered.error().message);
      for (const auto& [record, prepared] : recovered.value()) {
        if (!prepared) log_line("gantry: job " + record.id + " cannot be resumed: " + prepared.error().message);
        else resume(self, record, prepared.value());
      }
      done("");
    });
  },
  [=](const caf::error& e) {
    done("gantry: cannot read the stored jobs, none resumed: the store did not answer: " + error_text(self->system(), e));
  });
}

}  // namespace gantry::coordinator_detail
