#pragma once
// The settings of a tuning job, shared by `gantry tune` (as flags) and `gantry submit` (as a job
// file whose keys are the same names), so both paths build a job the same way.
#include <functional>
#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "actors/net/client.hpp"
#include "actors/tune_job.hpp"
#include "cli/cli_common.hpp"

namespace gantry::cli {

struct TuneArgs {
  ProblemArgs problem;
  SimArgs sim;
  OutputArgs out;
  std::string data, budget = "30s", patience, batch = "0.2s", method = "search";
  std::string devices;  // --method doppler: the embedded worker's executor devices (stage III)
  std::string gantry_exec;  // which measure through this gantry-exec program
  long evals = 0, batch_evals = 0;
  int rollouts = 0, priority = 0, parallelism = 0;
  bool budget_given = false, profiled = false;
};

// Budgets, seed and the store directory; errors name the flag (or job-file key).
TuneOptions tune_options(const TuneArgs& args);

// A job file's settings as written: its kind ("tune" when it has none) and every key with its
// value's text, for kinds whose command's flags read them (pipeline). Errors name the file.
struct JobFile {
  std::string path, kind = "tune";
  std::vector<std::pair<std::string, std::string>> settings;
};
JobFile read_job_file_settings(const std::string& path);

// A path a job file gives, read from the job file's folder when it is relative.
std::string path_from_job_file(const std::string& job_file, const std::string& path);
// Whether a --cluster value names a file (not identical:N nor a preset).
bool names_cluster_file(const std::string& cluster);

// A pipeline job file (kind: pipeline; keys are `gantry pipeline tune`'s flags for the problem,
// budget and search; file paths relative to the job file) as the job it describes.
JobSpec pipeline_job_from_file(const JobFile& file);

// Reads a job file (YAML, docs/formats.md): keys are `gantry tune`'s long flag names; a graph or
// cluster file's path is relative to the file. Errors name the file and the key.
void read_job_file(const std::string& path, TuneArgs& args);

// How a client reaches a coordinator: --coordinator (else $GANTRY_COORDINATOR, else
// tcp://127.0.0.1:7700), --timeout, and for a coordinator that requires CURVE the client's key pair
// (--curve-key, else $GANTRY_CURVE_KEY) and the coordinator's public key (--coordinator-key, else
// $GANTRY_COORDINATOR_KEY).
struct RemoteArgs {
  std::string endpoint, curve_key, coordinator_key;
  double timeout = 10;
  void add_to(CLI::App& cmd, const std::string& endpoint_help = "");
  ClientOptions client() const;  // errors (an unreadable key file) are CliErrors
};

// Reads a key pair and the other side's public key (both given, or neither) into CURVE settings.
CurveSettings curve_settings(const std::string& own_key_file, const std::string& server_key_file,
                             const std::string& own_flag, const std::string& server_flag);

// --priority of a job sent to a coordinator (tune, train, pipeline tune).
void add_priority_option(CLI::App& cmd, int& priority);

// Sends the job to the coordinator; with `wait`, follows it to its end and exits with its status
// (0 COMPLETE, 130 CANCELLED, 1 FAILED). Prints the job id (or the final record).
void submit_job(const TuneArgs& args, const RemoteArgs& remote, bool wait);
// `on_stored` runs (with `wait`) once a job that stored its results ended (COMPLETE or CANCELLED),
// before the exit status: what a client fetches of them.
void submit_job_spec(const JobSpec& spec, const RemoteArgs& remote, bool wait, bool json,
                     const std::function<void(const JobRecord&)>& on_stored = {});
// Submits the job and follows it to its end (progress on stderr); its final record.
JobRecord follow_remote_job(const JobSpec& spec, const RemoteArgs& remote);

}  // namespace gantry::cli
