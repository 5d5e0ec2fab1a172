#pragma once
// The settings of a tuning job, shared by `gantry tune` (as flags) and `gantry submit` (as a job
// file whose keys are the same names), so both paths build a job the same way.
#include <CLI/CLI.hpp>
#include <string>

#include "actors/tune_job.hpp"
#include "cli/cli_common.hpp"

namespace gantry::cli {

struct TuneArgs {
  ProblemArgs problem;
  SimArgs sim;
  OutputArgs out;
  std::string data, budget = "30s", patience, batch = "0.2s";
  long evals = 0, batch_evals = 0;
  int rollouts = 0, priority = 0, parallelism = 0;
  bool budget_given = false;
  std::string coordinator;  // "" = run embedded
};

// Budgets, seed and the store directory; errors name the flag (or job-file key).
TuneOptions tune_options(const TuneArgs& args);

// Reads a job file (YAML, docs/formats.md): keys are `gantry tune`'s long flag names; a graph path
// is relative to the file. Errors name the file and the key.
void read_job_file(const std::string& path, TuneArgs& args);

// The coordinator to talk to: the flag, else $GANTRY_COORDINATOR, else tcp://127.0.0.1:7700.
std::string coordinator_endpoint(const std::string& flag);
void add_coordinator_option(CLI::App& cmd, std::string& endpoint);

// Sends the job to `endpoint`; with `wait`, follows it to its end and exits with its status
// (0 COMPLETE, 130 CANCELLED, 1 FAILED). Prints the job id (or the final record).
void submit_job(const TuneArgs& args, const std::string& endpoint, bool wait);

}  // namespace gantry::cli
