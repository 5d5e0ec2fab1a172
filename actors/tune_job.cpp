#include "actors/tune_job.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "actors/embedded_job.hpp"
#include "actors/problem_spec.hpp"
#include "storage/store.hpp"

namespace gantry {

JobSpec make_job_spec(const TuneProblem& problem, const TuneOptions& options) {
  JobSpec spec;
  spec.problem = make_problem_spec(problem.graph, problem.cluster, problem.sim, problem.graph_label, problem.graph_json,
                                   problem.profiles);
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
    return make_error("--rollouts " + std::to_string(options.rollouts) + ": must be between 0 (one per core) and " +
                      std::to_string(max_rollouts()) + " (4 per hardware thread, 256 at most)");
  if (options.budget_evaluations < 0)
    return make_error("--evals " + std::to_string(options.budget_evaluations) + ": must be >= 0");
  auto opened = Store::open(options.data_dir);
  if (!opened) return opened.error();
  std::shared_ptr<Store> store = std::move(opened).value();
  if (options.faults.store_puts > 0) store->inject_faults({0, options.faults.store_puts});
  const int rollouts = options.rollouts > 0 ? options.rollouts : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  EmbeddedJobOptions embedded;
  embedded.rollouts = rollouts;
  embedded.deterministic = options.deterministic;
  embedded.fail_spawn = options.faults.spawn;
  embedded.cancel = options.cancel;
  embedded.hooks.on_progress = options.on_progress;
  return run_embedded_job(store, make_job_spec(problem, options), embedded);
}

}  // namespace gantry
