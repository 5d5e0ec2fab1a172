#pragma once
// The only owner of the RocksDB store inside a process. Spawned detached (its own thread):
// synced writes wait for the disk and must not block a scheduler thread.
#include <caf/all.hpp>
#include <memory>

#include "storage/store.hpp"

namespace gantry {

// Serves put_best (-> StoreReply), put_episode (no reply; WAL synced every second and on sync),
// put_job (-> StoreReply), put_content (graph and cluster content -> StoreReply), get_best
// (-> StoredBest), get_jobs (-> StoredJobs), tally (a job's episodes -> EpisodeTally), put_measurement
// (a best's measured makespan -> StoreReply), add_profiles (measured samples -> StoreReply) and sync
// (-> StoreReply).
caf::behavior store_actor(caf::event_based_actor* self, std::shared_ptr<Store> store);

}  // namespace gantry
