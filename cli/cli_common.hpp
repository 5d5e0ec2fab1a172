#pragma once
// What several verbs share: choosing a graph (--graph FILE | --workload SPEC) and a cluster, the
// simulator flags, output formats and timeline files.
#include <CLI/CLI.hpp>
#include <memory>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/measure_task.hpp"
#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/graph.hpp"
#include "core/placement.hpp"
#include "core/temp_folder.hpp"
#include "core/text.hpp"  // format_bytes
#include "executor/measurement.hpp"
#include "sim/sim_options.hpp"
#include "sim/sim_result.hpp"
#include "sim/timeline_export.hpp"

namespace gantry {
class Store;
}

namespace gantry::cli {

// Thrown by verbs for user-facing failures; main prints "gantry: <message>" and exits 1.
struct CliError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown by a verb that has printed its result but must end with another exit status; main
// prints "gantry: <message>" (when not empty) and exits with `code`.
struct CliExit {
  int code = 1;
  std::string message;
};
// Exit status of a cancelled job (Ctrl-C, SIGTERM or SIGHUP during `gantry tune`).
constexpr int kExitCancelled = 130;

struct ProblemArgs {
  std::string graph_file, workload, cluster = "4xP100-pcie";
  std::uint64_t seed = 1;
  void add_to(CLI::App& app);        // --graph/--workload, --cluster, --seed
  void add_graph_to(CLI::App& app);  // --graph/--workload, --seed (no cluster: `gantry export`)
};

// The names --sim, --dispatch and --links take (flags and job files check against these).
extern const std::vector<std::string> kSimNames, kDispatchNames, kLinkNames;

struct SimArgs {
  std::string sim = "default", dispatch = "fifo", links = "contention";
  bool no_dedup = false, memory = false;
  int streams = 0;
  double noise = 0;
  std::uint64_t noise_seed = 1;
  int noise_samples = 0;  // 0: 8 draws per evaluation when there is noise
  void add_to(CLI::App& app);
  SimOptions options() const;
};

struct OutputArgs {
  std::string format = "table", trace, svg;
  void add_to(CLI::App& app, bool timelines = true);
  bool json() const { return format == "json"; }
  bool wants_timeline() const { return !trace.empty() || !svg.empty(); }
};

// A loaded graph and cluster with their cost table.
struct Problem {
  Graph graph;
  Cluster cluster;
  std::string graph_label;
  std::unique_ptr<CostTable> costs;
};

Problem load_problem(const ProblemArgs& args);
// The store's measured profiles (`gantry profile`); none there is a CliError that says how to get
// them. load_profiles reads them without taking the store from its writer.
ProfileTable require_profiles(const Store& store);
ProfileTable load_profiles(const std::string& data_dir);
// --profiled, one wording for every verb that costs ops.
void add_profiled_flag(CLI::App& cmd, bool& profiled);
// Rebuilds the problem's costs with measured profiles, which the cost model prefers to the roofline.
void use_profiles(Problem& problem, const ProfileTable& profiles);
// A placement file for the problem's graph: one made for another graph (its fingerprint says so)
// is a CliError naming both.
Placement read_placement_for(const std::string& path, const Problem& problem);
Graph load_graph(const ProblemArgs& args);  // --graph or --workload alone (no cluster)
// A CLI11 check for a finite number in [low, high] (CLI11's own checks let "nan" through).
CLI::Validator finite_in(double low, double high);
// A whole number in [low, high] written in digits (CLI11's Range said "Value 1e3 not in range" of
// a number it could not read as one, and a seed of -1 wrapped to 2^64 - 1 silently).
CLI::Validator whole_in(std::uint64_t low, std::uint64_t high);
// A seed: a whole number from 0 to 2^64 - 1.
CLI::Validator seed_number();
// A file path, not empty: an empty one reads as "not given" further on (`--trace ''` wrote
// nothing and said nothing).
CLI::Validator file_path();
// Writes --trace / --svg files of a recorded timeline; a failed write is a CliError.
void write_timeline_files(const OutputArgs& out, const Graph& graph, const SimResult& result,
                          const TimelineLabels& labels);
// The same for a placement result, labelled with the problem's devices.
void write_timelines(const OutputArgs& out, const Problem& problem, const SimResult& result, const std::string& title);
// "12.3 ms" style for seconds, plain numbers for abstract units.
std::string format_time(double value, const std::string& unit);
// Local "YYYY-MM-DD HH:MM:SS" of unix seconds; "-" for none (0).
std::string format_unix_time(double unix_seconds);
// A number with `digits` decimals, for tables.
std::string format_fixed(double value, int digits);

// --no-store: an embedded job still needs a store; a temporary folder for one, removed with the
// object (null without --no-store).
std::unique_ptr<TempFolder> no_store_folder(bool no_store, const std::string& prefix);

// --devices cpu:N, cpu:all, cuda:N or cuda:all (a worker's executor devices); none for "". With
// `program` (--gantry-exec) they measure through that gantry-exec, and cuda's GPUs are the ones it
// sees. Errors name the flag's value (more cores than the machine has; cuda without a visible GPU).
ExecutorDevices parse_executor_devices(const std::string& devices, const std::string& program = "");

// --gantry-exec PATH on the commands that measure (worker, execute, profile, train, tune); `when`
// says what else the command needs for it ("" for nothing).
void add_gantry_exec_option(CLI::App& cmd, std::string& program, const std::string& when = "");
// --gantry-exec measures in this process: refused with --coordinator (`remote`), whose workers
// measure with their own.
void refuse_gantry_exec_remote(const std::string& program, bool remote);
// The GPUs measurements on cuda can use: this process's, or those `program` sees when given.
int visible_gpus(const std::string& program);
// Before anything is chosen or built: whether `program` (--gantry-exec) can run placements of
// `cluster` on `backend` with `exec` (an error naming the flag), and the GPUs it sees.
int checked_gantry_exec(const std::string& program, const std::string& backend, const Cluster& cluster,
                        const ExecOptions& exec);

}  // namespace gantry::cli
