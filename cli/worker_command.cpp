// gantry worker: rollout slots for a coordinator's pool. Connects, says hello, runs the batches it
// is leased, reconnects with backoff when the coordinator goes away. Runs until Ctrl-C / SIGTERM.
#include <algorithm>
#include <iostream>
#include <thread>

#include "actors/cluster_node.hpp"
#include "actors/tune_job.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/job_args.hpp"
#include "cli/stop_signals.hpp"

namespace gantry::cli {

namespace {

struct WorkerArgs {
  std::string connect, name, curve_key, coordinator_key, devices, gantry_exec;
  int rollouts = 0;
};

void run_worker(const WorkerArgs& args) {
  if (args.rollouts < 0 || args.rollouts > max_rollouts())
    throw CliError("--rollouts " + std::to_string(args.rollouts) + ": must be between 1 and " + std::to_string(max_rollouts()));
  WorkerServeOptions options;
  RemoteArgs remote;  // the same defaults and key rules as every client
  remote.endpoint = args.connect;
  remote.curve_key = args.curve_key;
  remote.coordinator_key = args.coordinator_key;
  const ClientOptions client = remote.client();
  options.connect = client.endpoint;
  options.curve = client.curve;
  options.worker.name = args.name;
  options.worker.slots = args.rollouts > 0 ? args.rollouts : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.worker.devices = parse_executor_devices(args.devices, args.gantry_exec);
  StopSignals signals;
  auto served = serve_worker(options, StopSignals::requested(), [&](const std::string& name) {
    std::cout << "gantry worker " << name << ": " << options.worker.slots << " rollout slots";
    const ExecutorDevices& devices = options.worker.devices;
    if (devices.count > 0)
      std::cout << " and " << devices.count << " " << devices.backend << " executor devices"
                << (devices.program.empty() ? "" : " (measured by " + devices.program + ")");
    std::cout << " for " << options.connect << " (Ctrl-C stops)" << std::endl;
  });
  if (!served) throw CliError(served.error().message);
  std::cout << "gantry worker: stopped" << std::endl;
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto args = std::make_shared<WorkerArgs>();
  CLI::App* cmd = app.add_subcommand("worker", "offer rollout slots to a coordinator's cluster");
  cmd->add_option("--connect", args->connect, "the coordinator (default: $GANTRY_COORDINATOR or tcp://127.0.0.1:7700)");
  cmd->add_option("--rollouts", args->rollouts, "rollout slots (default: one per core)");
  cmd->add_option("--devices", args->devices,
                  "executor devices to measure placements on: cpu:N or cpu:all (a core each), cuda:N or cuda:all (on the "
                  "GPUs; more devices than GPUs share them). The worker then takes measurement tasks (gantry execute "
                  "--coordinator, train --stage real) for clusters of up to N devices (CPU-kind clusters on cpu, others "
                  "on cuda) and runs each alone, with its rollouts paused");
  add_gantry_exec_option(*cmd, args->gantry_exec, "with --devices (the devices it measures on)");
  cmd->add_option("--name", args->name, "the worker's identity, stable across reconnects (default: HOST/PID)");
  cmd->add_option("--curve-key", args->curve_key, "this worker's CURVE key pair (gantry keys generate; default: $GANTRY_CURVE_KEY)");
  cmd->add_option("--coordinator-key", args->coordinator_key,
                  "the coordinator's CURVE public key (default: $GANTRY_COORDINATOR_KEY)");
  cmd->callback([args] { run_worker(*args); });
}

}  // namespace gantry::cli
