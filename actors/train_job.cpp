#include "actors/train_job.hpp"

#include "actors/cluster_node.hpp"
#include "actors/pool_episode_source.hpp"

namespace gantry {

Result<TrainResult> run_train_job(PolicyModel& model, const std::vector<TrainingProblem>& problems,
                                  const std::vector<ProblemSpec>& specs, const TrainOptions& options,
                                  const TrainJobOptions& job, const TrainHooks& hooks) {
  caf::actor_system_config cfg;
  configure_message_scheduler(cfg);
  caf::actor_system system{cfg};
  ProblemCache cache;
  EmbeddedClusterOptions embedded;
  embedded.rollouts = job.rollouts;
  embedded.cache = &cache;
  auto cluster = start_embedded_cluster(system, job.store, embedded);
  if (!cluster) return cluster.error();
  Result<TrainResult> result = make_error("training did not run");
  {
    PoolEpisodeSource source(system, cluster.value().coordinator.pool, job.job, specs);
    result = train(model, problems, source, options, hooks);
  }
  cluster.value().shutdown(system);
  return result;
}

}  // namespace gantry
