#include "actors/job_manager.hpp"

#include <unistd.h>

#include <chrono>

#include "actors/messages.hpp"
#include "core/host_name.hpp"
#include "core/unix_time.hpp"

namespace gantry {

namespace {

JobRecord job_record(const TunerConfig& c) {
  JobRecord job;
  job.id = c.job_id;
  job.state = JobState::running;
  job.graph = c.graph;
  job.cluster = c.runtime;
  job.graph_label = c.problem->graph_label;
  job.cluster_name = c.problem->cluster.name();
  job.started = unix_now();
  job.owner_pid = static_cast<long>(getpid());
  job.owner_host = host_name();
  return job;
}

}  // namespace

caf::behavior job_manager(caf::event_based_actor* self, TunerConfig tuner) {
  return {
      [=](run_job_atom) {
        auto promise = std::make_shared<caf::response_promise>(self->make_response_promise());
        auto job = std::make_shared<JobRecord>(job_record(tuner));
        // `outcome` is shared: the record is written asynchronously, after the caller's copy is gone.
        auto close = [=](JobState state, const std::string& message, std::shared_ptr<const TuneOutcome> outcome) {
          job->state = state;
          job->finished = unix_now();
          job->message = message;
          if (outcome) {
            job->evaluations = outcome->evaluations;
            job->best_makespan = outcome->best.makespan;
          }
          auto answer = [=] {
            if (outcome)
              promise->deliver(*outcome);
            else
              promise->deliver(caf::make_error(caf::sec::runtime_error, message));
          };
          self->request(tuner.store, caf::infinite, put_job_atom::value, *job)
              .then(
                  [=](const StoreReply& reply) {
                    if (!reply.ok) caf::aout(self) << "gantry: storing job " << job->id << " failed: " << reply.error << "\n";
                    answer();
                  },
                  [=](const caf::error& e) {
                    caf::aout(self) << "gantry: storing job " << job->id << " failed: " << self->system().render(e) << "\n";
                    answer();
                  });
        };
        self->request(tuner.store, caf::infinite, put_job_atom::value, *job).then([=](const StoreReply& reply) {
          if (!reply.ok) {
            promise->deliver(caf::make_error(caf::sec::runtime_error, "cannot record the job: " + reply.error));
            return;
          }
          caf::actor t = spawn_tuner(self->system(), tuner);
          self->request(t, caf::infinite, start_atom::value)
              .then([=](const TuneOutcome& outcome) {
                       close(outcome.state, outcome.stop_reason, std::make_shared<const TuneOutcome>(outcome));
                     },
                     [=](const caf::error& e) { close(JobState::failed, self->system().render(e), nullptr); });
        });
        return *promise;
      },
  };
}

}  // namespace gantry
