#include "actors/tune_job.hpp"

#include <unistd.h>

#include <atomic>
#include <caf/scheduler/test_coordinator.hpp>
#include <chrono>
#include <thread>

#include "actors/cluster_node.hpp"
#include "actors/messages.hpp"
#include "actors/problem_spec.hpp"
#include "storage/store.hpp"

namespace gantry {

namespace {

void configure(caf::actor_system_config& cfg, const TuneOptions& options) {
  if (options.deterministic) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.inline-output", true);
  } else {
    configure_message_scheduler(cfg);
  }
}

}  // namespace

JobSpec make_job_spec(const TuneProblem& problem, const TuneOptions& options) {
  JobSpec spec;
  spec.problem = make_problem_spec(problem.graph, problem.cluster, problem.sim, problem.graph_label, problem.graph_json);
  spec.budget_seconds = options.budget_seconds;
  spec.budget_evaluations = options.budget_evaluations;
  spec.patience_seconds = options.patience_seconds;
  spec.batch_seconds = options.batch_seconds;
  spec.batch_evaluations = options.batch_evaluations;
  spec.seed = options.seed;
  spec.fail_batch = options.faults.batch;
  spec.fail_times = options.faults.batch_times;
  return spec;
}

int max_rollouts() {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::min(256, 4 * threads);
}

Result<TuneOutcome> run_tune_job(const TuneProblem& problem, const TuneOptions& options) {
  if (options.rollouts < 0 || options.rollouts > max_rollouts())
    return make_error("--rollouts " + std::to_string(options.rollouts) + ": must be between 1 and " +
                      std::to_string(max_rollouts()) + " (4 per hardware thread, 256 at most; 0 = one per core)");
  if (options.budget_evaluations < 0)
    return make_error("--evals " + std::to_string(options.budget_evaluations) + ": must be >= 0");
  auto opened = Store::open(options.data_dir);
  if (!opened) return opened.error();
  std::shared_ptr<Store> store = std::move(opened).value();
  if (options.faults.store_puts > 0) store->inject_faults({0, options.faults.store_puts});
  const int rollouts = options.rollouts > 0 ? options.rollouts : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

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
  embedded.rollouts = rollouts;
  embedded.deterministic = options.deterministic;
  embedded.fail_spawn = options.faults.spawn;
  embedded.cache = &cache;
  auto cluster = start_embedded_cluster(system, store, embedded);
  if (!cluster) {
    settle();
    return cluster.error();
  }
  const CoordinatorNode& node = cluster.value().coordinator;
  if (scheduler) scheduler->run();  // the worker's hello reaches the pool before the job starts

  JobHooks hooks{options.on_progress};
  Result<TuneOutcome> result = make_error("the job ended without a result");
  {
    caf::scoped_actor self{system};
    self->monitor(node.coordinator);  // a coordinator that dies must not leave us waiting
    std::string job_id;
    bool done = false, cancel_sent = false;
    self->send(node.coordinator, submit_atom::value, make_job_spec(problem, options), hooks);
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
          [&](const caf::error& e) { failed("tuning job failed: " + error_text(system, e)); },
          [&](const caf::down_msg& down) { failed("tuning job failed: the coordinator stopped (" + system.render(down.reason) + ")"); },
          caf::after(std::chrono::milliseconds(scheduler ? 0 : 50)) >> [] {});
    }
  }
  cluster.value().shutdown(system);
  settle();
  return result;
}

}  // namespace gantry
