#include "actors/embedded_job.hpp"

#include <caf/scheduler/test_coordinator.hpp>
#include <chrono>

#include "actors/cluster_node.hpp"
#include "actors/problem_spec.hpp"

namespace gantry {

namespace {

void configure(caf::actor_system_config& cfg, const EmbeddedJobOptions& options) {
  if (options.deterministic) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.inline-output", true);
  } else {
    configure_message_scheduler(cfg);
  }
}

}  // namespace

Result<TuneOutcome> run_embedded_job(std::shared_ptr<Store> store, const JobSpec& spec, const EmbeddedJobOptions& options) {
  // The embedded cluster: a coordinator and one worker in this process, over inproc:// through the
  // same gateways as between hosts (or, under the test scheduler, a direct link).
  ProblemCache cache;  // before the actor system: the actors use it until the system is gone
  caf::actor_system_config cfg;
  configure(cfg, options);
  caf::actor_system system{cfg};
  auto* scheduler = options.deterministic ? dynamic_cast<caf::scheduler::test_coordinator*>(&system.scheduler()) : nullptr;
  const auto settle = [&] {  // under the test scheduler, run what is pending and drop the timers
    if (!scheduler) return;
    system.clock().cancel_all();
    scheduler->run();
  };
  EmbeddedClusterOptions embedded;
  embedded.rollouts = options.rollouts;
  embedded.devices = options.devices;
  embedded.deterministic = options.deterministic;
  embedded.fail_spawn = options.fail_spawn;
  embedded.cache = &cache;
  auto cluster = start_embedded_cluster(system, store, embedded);
  if (!cluster) {
    settle();
    return cluster.error();
  }
  const CoordinatorNode& node = cluster.value().coordinator;
  if (scheduler) scheduler->run();  // the worker's hello reaches the pool before the job starts

  Result<TuneOutcome> result = make_error("the job ended without a result");
  {
    caf::scoped_actor self{system};
    self->monitor(node.coordinator);  // a coordinator that dies must not leave us waiting
    std::string job_id;
    bool done = false, cancel_sent = false, cancel_error_seen = false;
    self->send(node.coordinator, submit_atom::value, spec, options.hooks);
    const auto failed = [&](const std::string& what) {
      result = make_error(what);
      done = true;
    };
    while (!done) {
      // Under the test scheduler one message at a time, so a cancellation lands mid-job.
      if (scheduler) scheduler->run(1);
      if (!job_id.empty() && !cancel_sent && options.cancel && options.cancel->load()) {
        self->send(node.coordinator, cancel_atom::value, job_id);  // cancellation is a message
        cancel_sent = true;
      }
      self->receive(
          [&](const std::string& text) {  // first the job's id (then wait for its end), later the cancel's answer
            if (!job_id.empty()) return;
            job_id = text;
            self->send(node.coordinator, await_atom::value, job_id);
          },
          [&](const TuneOutcome& outcome) {
            result = outcome;
            done = true;
          },
          [&](const caf::error& e) {
            // The cancel's answer when the job ended meanwhile ("no job ..."): its await still
            // brings the outcome. Any other error (a refused submit) ends the wait.
            if (cancel_sent && !cancel_error_seen) {
              cancel_error_seen = true;
              return;
            }
            failed("the job failed: " + error_text(system, e));
          },
          [&](const caf::down_msg& down) { failed("the job failed: the coordinator stopped (" + system.render(down.reason) + ")"); },
          caf::after(std::chrono::milliseconds(scheduler ? 0 : 50)) >> [] {});
    }
  }
  cluster.value().shutdown(system);
  settle();
  return result;
}

}  // namespace gantry
