// gantry coordinator: the cluster's center. Owns the store, the job queue and the rollout pool;
// workers connect to it, clients submit jobs and ask for status. Runs until Ctrl-C / SIGTERM.
#include <iostream>

#include "actors/cluster_node.hpp"
#include "actors/net/curve_keys.hpp"
#include "actors/net/gateway.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/duration.hpp"
#include "cli/stop_signals.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct CoordinatorArgs {
  std::string bind = "tcp://127.0.0.1:7700", data, curve_key, authorized_keys;
  int max_jobs = 4;
  int peer_queue = 100000;
  double lease_seconds = 60;
  bool insecure = false;
  std::string improve, improve_after = "10s";
  int improve_keep = 10;
};

double duration_of(const std::string& flag, const std::string& text) {
  auto seconds = parse_duration(text);
  if (!seconds || !(seconds.value() > 0))
    throw CliError(flag + " " + text + ": expected a duration above 0 such as 30s, 5m or 1h");
  return seconds.value();
}

void run_coordinator(const CoordinatorArgs& args) {
  CoordinatorServeOptions options;
  if (args.curve_key.empty() != args.authorized_keys.empty())
    throw CliError("CURVE needs both --curve-key and --authorized-keys (or neither)");
  if (!args.curve_key.empty()) {
    auto own = read_curve_key_pair(args.curve_key);
    if (!own) throw CliError("--curve-key: " + own.error().message);
    auto authorized = read_authorized_keys(args.authorized_keys);
    if (!authorized) throw CliError("--authorized-keys: " + authorized.error().message);
    options.curve.enabled = true;
    options.curve.own = own.value();
    options.curve.authorized = authorized.value();
  }
  if (Status ok = check_endpoint(args.bind); !ok) throw CliError("--bind: " + ok.error().message);
  // Without authentication anyone who reaches the port can submit work: loopback unless told.
  if (!options.curve.enabled && !is_local_endpoint(args.bind) && !args.insecure)
    throw CliError("--bind " + args.bind + ": binding beyond this host needs CURVE keys (--curve-key, --authorized-keys) or --insecure (anyone who reaches the port could submit jobs and take work)");
  options.bind = args.bind;
  options.data_dir = args.data.empty() ? default_data_dir() : args.data;
  options.max_running = args.max_jobs;
  options.peer_queue = args.peer_queue;
  options.pool.lease_seconds = args.lease_seconds;
  if (!args.improve.empty()) options.improve_seconds = duration_of("--improve", args.improve);
  options.improve_after = duration_of("--improve-after", args.improve_after);
  options.improve_keep = args.improve_keep;
  StopSignals signals;
  auto served = serve_coordinator(options, StopSignals::requested(), [&](const std::string& endpoint) {
    std::cout << "gantry coordinator: listening on " << endpoint << (options.curve.enabled ? " (CURVE, " + std::to_string(options.curve.authorized.size()) + " authorized keys)" : "")
              << ", store " << options.data_dir
              << ", up to " << args.max_jobs << " jobs at once"
              << (args.improve.empty() ? "" : ", improving stored problems " + args.improve + " at a time when idle")
              << " (Ctrl-C stops)" << std::endl;
  });
  if (!served) throw CliError(served.error().message);
  std::cout << "gantry coordinator: stopped" << std::endl;
}

}  // namespace

void add_coordinator_command(CLI::App& app) {
  auto args = std::make_shared<CoordinatorArgs>();
  CLI::App* cmd = app.add_subcommand("coordinator", "serve the cluster: the store, the job queue and the rollout pool that workers join");
  cmd->add_option("--bind", args->bind, "endpoint to listen on (tcp://HOST:PORT; port 0 = any free port)")->capture_default_str();
  cmd->add_option("--data", args->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  cmd->add_option("--max-jobs", args->max_jobs, "jobs running at once; the others wait in the queue")
      ->check(whole_in(1, 1000))
      ->capture_default_str();
  cmd->add_option("--lease-seconds", args->lease_seconds,
                  "a leased task goes back to the queue when its worker has not answered this long after the task's own time")
      ->check(finite_in(1, 86400))
      ->capture_default_str();
  cmd->add_option("--peer-queue", args->peer_queue,
                  "messages queued for one worker or client, each way, before further ones are dropped (a client that stops "
                  "reading loses replies; an assign dropped for a worker runs elsewhere after --lease-seconds; the "
                  "coordinator never waits)")
      ->check(whole_in(10, 10000000))
      ->capture_default_str();
  cmd->add_option("--improve", args->improve,
                  "keep improving in the background: once no submitted job has been queued or running for --improve-after, "
                  "tune a stored problem again (the tune and pipeline jobs submitted before, least recently tuned first, "
                  "each from its stored best, at the lowest priority) for this long (e.g. 5m), one run per this long at most "
                  "while the cluster stays idle, each recorded as a job; a job submitted meanwhile stops it, keeping what "
                  "it found. Off by default");
  cmd->add_option("--improve-after", args->improve_after, "with --improve: how long the cluster must be idle first")
      ->capture_default_str();
  cmd->add_option("--improve-keep", args->improve_keep,
                  "with --improve: the background runs of each problem kept in the store (their job records); older "
                  "ones are dropped (stored bests keep their job ids)")
      ->check(whole_in(1, 1000000))
      ->capture_default_str();
  cmd->add_flag("--insecure", args->insecure, "allow binding beyond loopback without authentication");
  cmd->add_option("--curve-key", args->curve_key, "the coordinator's CURVE key pair (gantry keys generate coordinator): traffic is encrypted");
  cmd->add_option("--authorized-keys", args->authorized_keys,
                  "file of the public keys (one per line) of the workers and clients allowed in; all others are refused");
  cmd->footer("Workers join with `gantry worker --connect ENDPOINT`; jobs come from `gantry submit` and `gantry tune --coordinator`.\n"
              "A worker that misses 3 heartbeats (1 s each) is gone and its leased tasks run elsewhere.");
  cmd->callback([args] { run_coordinator(*args); });
}

}  // namespace gantry::cli
