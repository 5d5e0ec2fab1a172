#pragma once
// A learner job of `gantry train`, also what `gantry tune --method doppler` runs: load the graphs,
// train (imitation, then policy gradient), print a table per graph, store the policy and the bests.
#include <string>
#include <vector>

#include "cli/cli_common.hpp"
#include "cli/job_args.hpp"

namespace gantry::cli {

struct TrainArgs {
  std::vector<std::string> graphs, workloads;
  std::vector<std::string> clusters{"4xP100-pcie"};  // every graph on each (one policy, any device count)
  std::uint64_t seed = 1;
  SimArgs sim;
  std::string stage = "il+sim", budget, init, name = "doppler", ablation = "dual", curve, data, save;
  long episodes = 0;
  double il_share = 0.2, measured_share = 1;
  int priority = 0;  // with --coordinator: higher runs first
  ExecutorDevices devices;  // the embedded worker's executor devices (stage III), instead of the default
  std::string gantry_exec;  // stage III measures through this gantry-exec program
  int batch = 8, graphs_per_update = 4, threads = 1, hidden = 64, head = 64, state = 16, steps = 3, staleness = 2;
  double lr = 0, entropy = 1e-3, epsilon = 0;
  long progress_every = 0;
  std::string stale = "weight", imitate = "ties";
  bool no_store = false;
  bool profiled = false;  // cost the graphs with --data's measured profiles, which travel with the job
  std::string format = "table";  // or json: the report as one JSON object on stdout
};

// Runs the learner job in this process, or on `remote`'s coordinator when its endpoint is set.
// Throws CliError for bad settings or a failure, CliExit when stopped by a signal (after storing).
void run_train(const TrainArgs& args, const RemoteArgs& remote);

}  // namespace gantry::cli
