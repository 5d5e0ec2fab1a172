#include <unistd.h>

#include "actors/coordinator_state.hpp"
#include "actors/log_line.hpp"
#include "actors/off_thread.hpp"
#include "core/host_name.hpp"
#include "storage/store.hpp"

namespace gantry::coordinator_detail {

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
    else out.emplace_back(record, prepare_job(stored_spec(std::move(spec).value()), cache, /*durable=*/false, {}));  // its spec is stored
  }
  return out;
}

// The interrupted jobs ids[i..] that have a stored spec, read one at a time (each a point read:
// only these specs are read) into `found`, shared along the chain (each holds a whole graph: a
// copy per step would copy them all again at every step); then rebuilt and queued again.
void read_interrupted(Self self, std::shared_ptr<const std::vector<std::string>> ids, std::size_t i,
                      std::shared_ptr<std::vector<JobRecord>> found) {
  const auto done = [=](const std::string& error) {
    --self->state.recovering;
    if (!error.empty()) log_line(error);
  };
  if (i < ids->size()) {
    const std::string& id = (*ids)[i];
    self->request(self->state.store, kStoreTimeout, get_job_atom::value, id)
        .then(
            [=](const StoredJobs& stored) {
              if (!stored.error.empty()) log_line("gantry: job " + (*ids)[i] + " cannot be resumed: " + stored.error);
              else if (!stored.jobs.empty() && !stored.jobs.front().spec.empty()) found->push_back(stored.jobs.front());
              read_interrupted(self, ids, i + 1, found);  // a job without a spec ran in its own process: nothing to rerun
            },
            [=](const caf::error& e) {
              log_line("gantry: job " + (*ids)[i] + " cannot be resumed: the store did not answer: " + error_text(self->system(), e));
              read_interrupted(self, ids, i + 1, found);
            });
    return;
  }
  if (found->empty()) return done("");
  ProblemCache* cache = self->state.options.cache;
  off_thread<Recovered>(self, [found, cache] { return rebuild(*found, cache); }, [=](Result<Recovered> recovered) {
    if (!recovered) return done("gantry: no job resumed: " + recovered.error().message);
    for (const auto& [record, prepared] : recovered.value()) {
      if (!prepared) log_line("gantry: job " + record.id + " cannot be resumed: " + prepared.error().message);
      else resume(self, record, prepared.value());
    }
    done("");
  });
}

}  // namespace

// One listing of the stored jobs without their specs (a submitted job's spec holds its graph:
// megabytes), for both: the submit keys, after which the keyed submits that came meanwhile go on
// (a store that cannot list its jobs leaves the keys of this run only), and the jobs the previous
// coordinator was running or had queued (the store marked them INTERRUPTED when this one opened
// it), which go back to the queue, each to go on from its stored episodes and best; of the specs,
// only theirs are read.
void read_store_at_start(Self self) {
  CoordinatorState& s = self->state;
  const bool keys = s.options.submit_keys, recover = s.options.recover;
  if (!keys) s.keys_read = true;  // none stored to wait for
  if (!keys && !recover) return;
  if (recover) ++s.recovering;  // the cluster is not idle while they are rebuilt (background improvement)
  const auto keys_known = [=] {
    CoordinatorState& st = self->state;
    st.keys_read = true;
    auto waiting = std::move(st.before_keys);
    for (const auto& [gateway, peer, request] : waiting) submit_durable(self, gateway, peer, request);
  };
  const auto unlisted = [=](const std::string& why) {
    if (keys) {
      log_line("gantry: cannot read the stored jobs' submit keys: " + why);
      keys_known();
    }
    if (recover) {
      --self->state.recovering;
      log_line("gantry: cannot read the stored jobs, none resumed: " + why);
    }
  };
  // No timeout: a slow listing of a large store must not leave the stored keys unread.
  self->request(s.store, caf::infinite, get_jobs_atom::value, false)
      .then(
          [=](const StoredJobs& stored) {
            if (!stored.error.empty()) return unlisted(stored.error);
            if (keys) {
              for (const JobRecord& record : stored.jobs)
                if (!record.submit_key.empty()) self->state.submitted[record.submit_key] = record.id;
              keys_known();
            }
            if (!recover) return;
            std::vector<std::string> interrupted;
            for (const JobRecord& record : stored.jobs)
              if (record.state == JobState::interrupted) interrupted.push_back(record.id);
            read_interrupted(self, std::make_shared<const std::vector<std::string>>(std::move(interrupted)), 0,
                             std::make_shared<std::vector<JobRecord>>());
          },
          [=](const caf::error& e) { unlisted("the store did not answer: " + error_text(self->system(), e)); });
}

}  // namespace gantry::coordinator_detail
