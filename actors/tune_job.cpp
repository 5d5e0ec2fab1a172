#include "actors/tune_job.hpp"

#include <unistd.h>

#include <caf/scheduler/test_coordinator.hpp>
#include <chrono>
#include <system_error>
#include <thread>

#include "actors/job_manager.hpp"
#include "actors/messages.hpp"
#include "actors/rollout_actor.hpp"
#include "actors/store_actor.hpp"
#include "sim/runtime_fingerprint.hpp"

namespace gantry {

namespace {

std::string new_job_id() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  static std::atomic<int> counter{0};  // two jobs of one process in one millisecond
  char buffer[80];
  std::snprintf(buffer, sizeof buffer, "job-%lld-%d-%d", ms, static_cast<int>(getpid()), counter++);
  return buffer;
}

void configure(caf::actor_system_config& cfg, const TuneOptions& options) {
  if (options.deterministic) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.inline-output", true);
  } else {
    // Rollouts and the store run detached (own threads); the scheduler serves tuner and manager.
    cfg.set("scheduler.max-threads", 2);
  }
}

}  // namespace

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
  const Fingerprint graph_fp = fingerprint(problem.graph);
  const Fingerprint runtime_fp = runtime_fingerprint(problem.cluster, problem.sim);
  if (!problem.graph_json.empty()) {
    auto s = store->put_graph(graph_fp, problem.graph_json);
    if (!s) return s.error();
  }
  {  // the content, not the --cluster string: a file can move, a preset can change
    auto s = store->put_cluster(runtime_fp, problem.cluster.to_yaml());
    if (!s) return s.error();
  }

  const int rollouts = options.rollouts > 0 ? options.rollouts : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const PlacementProblem placement_problem{problem.graph, problem.cluster, problem.costs, problem.sim};

  caf::actor_system_config cfg;
  configure(cfg, options);
  caf::actor_system system{cfg};
  const auto spawn_worker = [&](auto fun, auto&&... args) {
    return options.deterministic ? system.spawn(fun, std::forward<decltype(args)>(args)...)
                                 : system.spawn<caf::detached>(fun, std::forward<decltype(args)>(args)...);
  };
  TunerConfig config;
  config.problem = &problem;
  config.placement_problem = &placement_problem;
  config.options = &options;
  config.job_id = new_job_id();
  config.graph = graph_fp;
  config.runtime = runtime_fp;
  // A detached actor is a thread: when one cannot be created (ulimit -u, memory), stop the ones
  // already running and say so, instead of leaving the actor system waiting for them.
  try {
    config.store = spawn_worker(store_actor, store);
    for (int i = 0; i < rollouts; ++i) {
      if (i == options.faults.spawn)
        throw std::system_error(EAGAIN, std::generic_category(), "injected fault: cannot create a thread");
      config.rollouts.push_back(spawn_worker(rollout_actor, &placement_problem, i));
    }
  } catch (const std::exception& e) {
    const std::string message = "cannot start rollout " + std::to_string(config.rollouts.size()) + " of " +
                                std::to_string(rollouts) + " (" + e.what() +
                                "); try fewer --rollouts or raise the process limit (ulimit -u)";
    {
      caf::scoped_actor self{system};
      for (const caf::actor& a : config.rollouts) self->send_exit(a, caf::exit_reason::user_shutdown);
      if (config.store) self->send_exit(config.store, caf::exit_reason::user_shutdown);
    }
    if (options.deterministic) {
      system.clock().cancel_all();
      dynamic_cast<caf::scheduler::test_coordinator&>(system.scheduler()).run();
    }
    return make_error(message);
  }
  caf::actor manager = system.spawn(job_manager, config);

  Result<TuneOutcome> result = make_error("the job ended without a result");
  {
    caf::scoped_actor self{system};
    self->monitor(manager);  // a manager that dies must not leave us waiting
    self->send(manager, run_job_atom::value);
    auto* scheduler = options.deterministic
                          ? dynamic_cast<caf::scheduler::test_coordinator*>(&system.scheduler())
                          : nullptr;
    for (bool done = false; !done;) {
      if (scheduler) scheduler->run();
      self->receive(
          [&](const TuneOutcome& outcome) {
            result = outcome;
            done = true;
          },
          [&](const caf::error& e) {
            result = make_error("tuning job failed: " + system.render(e));
            done = true;
          },
          [&](const caf::down_msg& down) {
            result = make_error("tuning job failed: the job manager stopped (" + system.render(down.reason) + ")");
            done = true;
          },
          caf::after(std::chrono::milliseconds(scheduler ? 0 : 200)) >> [] {});
    }
    for (const caf::actor& a : config.rollouts) self->send_exit(a, caf::exit_reason::user_shutdown);
    self->send_exit(config.store, caf::exit_reason::user_shutdown);
    self->send_exit(manager, caf::exit_reason::user_shutdown);
  }
  if (options.deterministic) {
    auto& scheduler = dynamic_cast<caf::scheduler::test_coordinator&>(system.scheduler());
    system.clock().cancel_all();  // pending timers (WAL sync) would keep actors alive
    scheduler.run();
  }
  return result;
}

}  // namespace gantry
