#include "actors/train_job.hpp"

#include "actors/cluster_node.hpp"
#include "actors/pool_episode_source.hpp"

namespace gantry {

Result<TrainResult> run_train_job(PolicyModel& model, const std::vector<TrainingProblem>& problems,
                                  const std::vector<ProblemSpec>& specs, const TrainOptions& options,
                                  const TrainJobOptions& job, const TrainHooks& hooks) {
  ProblemCache cache;  // before the actor system: the actors use it until the system is gone
  caf::actor_system_config cfg;
  configure_message_scheduler(cfg);
  caf::actor_system system{cfg};
  EmbeddedClusterOptions embedded;
  embedded.rollouts = job.rollouts;
  embedded.cache = &cache;
  auto cluster = start_embedded_cluster(system, job.store, embedded);
  if (!cluster) return cluster.error();
  Result<TrainResult> result = make_error("training did not run");
  {
    PoolEpisodeSource source(system, cluster.value().coordinator.pool, job.job, specs);
    try {  // an exception must not skip the shutdown: the system's destructor would wait for its actors
      result = train(model, problems, source, options, hooks);
    } catch (const std::exception& e) {
      result = make_error(std::string("training failed: ") + e.what());
    }
  }
  cluster.value().shutdown(system);
  return result;
}

}  // namespace gantry
