#pragma once
// The actors that make a process a coordinator or a worker, wired the same way whether the other
// side is in this process (inproc:// or, under the test scheduler, a direct link) or on another
// host (tcp://). `gantry coordinator`, `gantry worker` and the embedded `gantry tune` all start
// their nodes here.
#include <caf/all.hpp>
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "actors/coordinator.hpp"
#include "actors/net/curve_keys.hpp"
#include "actors/rollout_pool.hpp"
#include "actors/worker_actor.hpp"
#include "core/result.hpp"

namespace gantry {

class Store;

struct CoordinatorNode {
  caf::actor store, pool, coordinator, gateway;
  std::string endpoint;  // as bound ("" without a gateway)
  void shutdown(caf::actor_system& system) const;  // exits every actor of the node
};

struct CoordinatorNodeOptions {
  std::string bind;                // "" = no gateway (workers connect through direct links)
  CurveSettings curve;
  int peer_queue = 100000;         // messages queued per peer before sends to it are dropped
  bool detached_store = true;      // the store on its own thread (false under the test scheduler)
  PoolOptions pool;
  CoordinatorOptions coordinator;
};

Result<CoordinatorNode> start_coordinator_node(caf::actor_system& system, std::shared_ptr<Store> store,
                                               const CoordinatorNodeOptions& options);

struct WorkerNode {
  caf::actor worker, gateway;  // gateway unset when linked directly
  void shutdown(caf::actor_system& system) const;  // says bye, then exits
};

struct WorkerNodeOptions {
  WorkerOptions worker;
  std::string connect;              // the coordinator's endpoint; "" = link directly to `pool`
  CurveSettings curve;
  caf::actor pool;                  // for a direct link
  int fail_spawn = -1;              // fault injection (tests): rollout number `fail_spawn` cannot start
};

// Spawns the rollouts first: a thread that cannot be created is an error naming the rollout, with
// the ones already started stopped again.
Result<WorkerNode> start_worker_node(caf::actor_system& system, const WorkerNodeOptions& options, ProblemCache* cache);

// A coordinator and one worker in this process, over inproc:// through the same gateways as
// between hosts (or, under the test scheduler, a direct link): what `gantry tune` and
// `gantry train` run on when no --coordinator is given.
struct EmbeddedCluster {
  CoordinatorNode coordinator;
  WorkerNode worker;
  void shutdown(caf::actor_system& system) const;  // the worker first, then the coordinator
};

struct EmbeddedClusterOptions {
  int rollouts = 1;            // the worker's slots
  ExecutorDevices devices;     // the worker's executor devices (measure tasks run on this machine)
  bool deterministic = false;  // under CAF's test scheduler: direct links, no timers, no threads
  int fail_spawn = -1;         // fault injection (tests), as WorkerNodeOptions
  ProblemCache* cache = nullptr;  // shared by the coordinator and the worker; must outlive them
};

Result<EmbeddedCluster> start_embedded_cluster(caf::actor_system& system, std::shared_ptr<Store> store,
                                               const EmbeddedClusterOptions& options);

// The scheduler of a gantry process (coordinator, worker, embedded job): the work runs on detached
// rollouts, the store and the gateways have threads of their own, and the scheduled actors only
// pass messages. One thread that sleeps on a condition variable until a message comes: CAF's
// work-stealing threads poll instead, and an idle one notices a message only after up to 10 ms
// of sleep, which, at every hop between a result and the next task, left rollouts idle.
void configure_message_scheduler(caf::actor_system_config& cfg);

// "host/pid": a worker's default name, stable while it runs.
std::string default_worker_name();

// The processes' main loops: start the node in an actor system of their own, call `ready` (with
// the bound endpoint), serve until `stop` is set, then shut down cleanly. Errors (a store that
// cannot be opened, an endpoint that cannot be bound) come back before `ready`.
struct CoordinatorServeOptions {
  std::string bind, data_dir;
  int max_running = 4;
  int peer_queue = 100000;
  PoolOptions pool;
  CurveSettings curve;
  double improve_seconds = 0, improve_after = 10;  // background improvement (CoordinatorOptions)
  int improve_keep = 10;
};
Status serve_coordinator(const CoordinatorServeOptions& options, const std::atomic<bool>& stop,
                         const std::function<void(const std::string& endpoint)>& ready);

struct WorkerServeOptions {
  std::string connect;
  WorkerOptions worker;
  CurveSettings curve;
};
Status serve_worker(const WorkerServeOptions& options, const std::atomic<bool>& stop,
                    const std::function<void(const std::string& name)>& ready);

}  // namespace gantry
