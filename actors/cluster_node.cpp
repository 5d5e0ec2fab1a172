#include "actors/cluster_node.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include "actors/direct_link.hpp"
#include "actors/messages.hpp"
#include "actors/net/gateway.hpp"
#include "actors/store_actor.hpp"
#include "actors/problem_spec.hpp"
#include "core/host_name.hpp"
#include "storage/store.hpp"

namespace gantry {

void CoordinatorNode::shutdown(caf::actor_system& system) const {
  caf::scoped_actor self{system};
  for (const caf::actor& a : {gateway, coordinator, pool, store})
    if (a) self->send_exit(a, caf::exit_reason::user_shutdown);
}

Result<CoordinatorNode> start_coordinator_node(caf::actor_system& system, std::shared_ptr<Store> store,
                                               const CoordinatorNodeOptions& options) {
  CoordinatorNode node;
  node.store = options.detached_store ? system.spawn<caf::detached>(store_actor, store) : system.spawn(store_actor, store);
  node.pool = spawn_rollout_pool(system, options.pool);
  node.coordinator = spawn_coordinator(system, node.store, node.pool, options.coordinator);
  if (!options.bind.empty()) {
    GatewayOptions g;
    g.bind = true;
    g.endpoint = options.bind;
    g.workers = node.pool;
    g.clients = node.coordinator;
    g.curve = options.curve;
    g.high_water_mark = options.peer_queue;
    auto gateway = spawn_gateway(system, g);
    if (!gateway) {
      node.shutdown(system);
      return gateway.error();
    }
    node.gateway = gateway.value().actor;
    node.endpoint = gateway.value().endpoint;
  }
  return node;
}

void WorkerNode::shutdown(caf::actor_system& system) const {
  caf::scoped_actor self{system};
  if (worker) self->send_exit(worker, caf::exit_reason::user_shutdown);
  if (gateway) {  // the worker says bye through the gateway before the gateway goes
    self->wait_for(worker);
    self->send_exit(gateway, caf::exit_reason::user_shutdown);
  }
}

namespace {

// An inproc:// name no other embedded cluster of this process uses.
std::string embedded_endpoint() {
  static std::atomic<int> counter{0};
  return "inproc://gantry-embedded-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

void EmbeddedCluster::shutdown(caf::actor_system& system) const {
  worker.shutdown(system);
  coordinator.shutdown(system);
}

Result<EmbeddedCluster> start_embedded_cluster(caf::actor_system& system, std::shared_ptr<Store> store,
                                               const EmbeddedClusterOptions& options) {
  CoordinatorNodeOptions c;
  c.bind = options.deterministic ? "" : embedded_endpoint();
  c.detached_store = !options.deterministic;
  c.pool.timers = !options.deterministic;
  c.pool.announce = false;  // the embedded worker comes and goes with the job
  c.coordinator.timers = !options.deterministic;
  c.coordinator.cache = options.cache;
  c.coordinator.max_running = 1;
  auto coordinator = start_coordinator_node(system, std::move(store), c);
  if (!coordinator) return coordinator.error();
  WorkerNodeOptions w;
  w.worker.slots = options.rollouts;
  w.worker.devices = options.devices;
  w.worker.name = "embedded";
  w.worker.detached_rollouts = !options.deterministic;
  w.worker.timers = !options.deterministic;
  w.connect = coordinator.value().endpoint;
  w.pool = coordinator.value().pool;
  w.fail_spawn = options.fail_spawn;
  auto worker = start_worker_node(system, w, options.cache);
  if (!worker) {
    coordinator.value().shutdown(system);
    return worker.error();
  }
  return EmbeddedCluster{coordinator.value(), worker.value()};
}

void configure_message_scheduler(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 1);
}

std::string default_worker_name() { return host_name() + "/" + std::to_string(getpid()); }

Result<WorkerNode> start_worker_node(caf::actor_system& system, const WorkerNodeOptions& options, ProblemCache* cache) {
  WorkerOptions w = options.worker;
  if (w.name.empty()) w.name = default_worker_name();
  std::vector<caf::actor> rollouts;
  // A detached actor is a thread: when one cannot be created (ulimit -u, memory), stop the ones
  // already running and say so, instead of leaving the actor system waiting for them.
  try {
    for (int i = 0; i < w.slots; ++i) {
      if (i == options.fail_spawn)
        throw std::system_error(EAGAIN, std::generic_category(), "injected fault: cannot create a thread");
      rollouts.push_back(spawn_rollout(system, w, i));
    }
  } catch (const std::exception& e) {
    caf::scoped_actor self{system};
    for (const caf::actor& a : rollouts) self->send_exit(a, caf::exit_reason::user_shutdown);
    return make_error("cannot start rollout " + std::to_string(rollouts.size()) + " of " + std::to_string(w.slots) + " (" +
                      e.what() + "); try fewer --rollouts or raise the process limit (ulimit -u)");
  }
  WorkerNode node;
  node.worker = spawn_worker(system, w, cache, std::move(rollouts));
  if (options.connect.empty()) {
    connect_worker(node.worker, spawn_direct_link(system, options.pool, node.worker, w.name));
    return node;
  }
  GatewayOptions g;
  g.bind = false;
  g.endpoint = options.connect;
  g.identity = w.name;
  g.sink = node.worker;
  g.curve = options.curve;
  auto gateway = spawn_gateway(system, g);
  if (!gateway) {
    caf::scoped_actor self{system};
    self->send_exit(node.worker, caf::exit_reason::user_shutdown);
    return gateway.error();
  }
  node.gateway = gateway.value().actor;
  connect_worker(node.worker, node.gateway);
  return node;
}

namespace {

// Serves until `stop`, or until one of the node's actors goes down. An actor of a server that
// dies of an exception would otherwise leave a process that looks alive and answers nothing; an
// error ends the process instead (non-zero exit), so a supervisor restarts it and the restarted
// coordinator reruns the interrupted jobs.
Status serve_until(caf::actor_system& system, const std::vector<caf::actor>& node, const char* role,
                   const std::atomic<bool>& stop) {
  caf::scoped_actor self{system};
  for (const caf::actor& a : node)
    if (a) self->monitor(a);
  std::string failure;
  while (!stop.load() && failure.empty()) {
    self->receive(
        [&](const caf::down_msg& down) {
          failure = std::string("the ") + role + " stopped: one of its actors went down (" + system.render(down.reason) + ")";
        },
        caf::after(std::chrono::milliseconds(50)) >> [] {});
  }
  if (!failure.empty()) return make_error(failure);
  return Ok{};
}

}  // namespace

namespace {

Status serve_coordinator_on(std::shared_ptr<Store> store, const CoordinatorServeOptions& options, const std::atomic<bool>& stop,
                            const std::function<void(const std::string& endpoint)>& ready, bool& started);

}  // namespace

namespace {

// The outermost folder of `path` that does not exist yet (what opening a store there creates), or
// an empty path when it exists.
std::filesystem::path outermost_missing(const std::string& path) {
  std::error_code error;
  std::filesystem::path p = std::filesystem::absolute(path, error);
  if (error || std::filesystem::exists(std::filesystem::symlink_status(p, error))) return {};
  while (p.has_relative_path() && !std::filesystem::exists(std::filesystem::symlink_status(p.parent_path(), error)))
    p = p.parent_path();
  return p;
}

}  // namespace

Status serve_coordinator(const CoordinatorServeOptions& options, const std::atomic<bool>& stop,
                         const std::function<void(const std::string& endpoint)>& ready) {
  std::error_code ignored;
  const std::filesystem::path made = outermost_missing(options.data_dir);
  bool started = false;
  Status served = Ok{};
  {
    auto opened = Store::open(options.data_dir);
    if (!opened) return opened.error();
    served = serve_coordinator_on(std::move(opened).value(), options, stop, ready, started);
  }  // the store is closed here
  // A coordinator that could not start (its endpoint taken) leaves no empty store behind in the
  // folders it made; a folder that was there, or one it served from, is kept.
  if (!started && !made.empty()) std::filesystem::remove_all(made, ignored);
  return served;
}

namespace {

Status serve_coordinator_on(std::shared_ptr<Store> store, const CoordinatorServeOptions& options, const std::atomic<bool>& stop,
                            const std::function<void(const std::string& endpoint)>& ready, bool& started) {
  ProblemCache cache;
  caf::actor_system_config cfg;
  configure_message_scheduler(cfg);
  caf::actor_system system{cfg};
  CoordinatorNodeOptions c;
  c.bind = options.bind;
  c.pool = options.pool;
  c.coordinator.max_running = options.max_running;
  c.curve = options.curve;
  c.peer_queue = options.peer_queue;
  c.coordinator.cache = &cache;
  c.coordinator.submit_keys = true;
  c.coordinator.recover = true;
  c.coordinator.improve_seconds = options.improve_seconds;
  c.coordinator.improve_after = options.improve_after;
  c.coordinator.improve_keep = options.improve_keep;
  auto node = start_coordinator_node(system, store, c);
  if (!node) return node.error();
  started = true;
  ready(node.value().endpoint);
  const CoordinatorNode& n = node.value();
  Status served = serve_until(system, {n.store, n.pool, n.coordinator, n.gateway}, "coordinator", stop);
  n.shutdown(system);
  return served;
}

}  // namespace

Status serve_worker(const WorkerServeOptions& options, const std::atomic<bool>& stop,
                    const std::function<void(const std::string& name)>& ready) {
  ProblemCache cache;
  caf::actor_system_config cfg;
  configure_message_scheduler(cfg);
  caf::actor_system system{cfg};
  WorkerNodeOptions w;
  w.worker = options.worker;
  if (w.worker.name.empty()) w.worker.name = default_worker_name();
  w.connect = options.connect;
  w.worker.coordinator = options.connect;  // a served worker says how reaching it goes (an embedded one has nothing to say)
  w.curve = options.curve;
  auto node = start_worker_node(system, w, &cache);
  if (!node) return node.error();
  ready(w.worker.name);
  Status served = serve_until(system, {node.value().worker, node.value().gateway}, "worker", stop);
  node.value().shutdown(system);
  return served;
}

}  // namespace gantry
