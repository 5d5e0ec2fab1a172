#include "cli/cli_common.hpp"

#include "core/fingerprint.hpp"
#include "executor/cuda/cuda_executor.hpp"
#include "executor/external_executor.hpp"
#include "storage/store.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <thread>

#include "core/graph_io.hpp"
#include "core/json_util.hpp"
#include "sim/timeline_export.hpp"
#include "workloads/workload.hpp"

namespace gantry::cli {

CLI::Validator finite_in(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < low || value > high)
          return "'" + text + "' is not a number from " + format_fixed(low, 0) + " to " + format_fixed(high, 0);
        return {};
      },
      "NUMBER in [" + format_fixed(low, 0) + ", " + format_fixed(high, 0) + "]");
}

CLI::Validator whole_in(std::uint64_t low, std::uint64_t high) {
  const std::string range = std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 20 &&
                            std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
        errno = 0;
        const unsigned long long value = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
        if (!digits || errno == ERANGE || value < low || value > high)
          return "'" + text + "' is not a whole number from " + range;
        return {};
      },
      "INT in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
}

CLI::Validator seed_number() { return whole_in(0, std::numeric_limits<std::uint64_t>::max()); }

CLI::Validator file_path() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "an empty path" : ""; }, "PATH");
}

void ProblemArgs::add_graph_to(CLI::App& app) {
  auto* graph = app.add_option("--graph", graph_file, "graph file: gantry .json, DOPPLER .txt or STG .stg")->check(file_path());
  auto* work = app.add_option("--workload", workload,
                              "built-in generator, e.g. llama-layer, chainmm:blocks=4 or chainmm:costs=doppler (see `gantry workloads`)");
  graph->excludes(work);
  app.add_option("--seed", seed, "seed for generators and randomised methods")->capture_default_str()->check(seed_number());
}

void ProblemArgs::add_to(CLI::App& app) {
  add_graph_to(app);
  std::string presets;  // the built-in ones, so the help never lags a new preset
  for (const std::string& name : Cluster::preset_names()) presets += (presets.empty() ? "" : ", ") + name;
  app.add_option("--cluster", cluster, "preset (" + presets + "; `gantry clusters` lists them) or a YAML file")
      ->capture_default_str();
}

const std::vector<std::string> kSimNames = {"default", "doppler"};
const std::vector<std::string> kDispatchNames = {"fifo", "priority"};
const std::vector<std::string> kLinkNames = {"contention", "unlimited"};

void SimArgs::add_to(CLI::App& app) {
  app.add_option("--sim", sim, "simulator: default, or doppler (the public DOPPLER simulator, event for event)")
      ->check(CLI::IsMember(kSimNames))
      ->capture_default_str();
  app.add_option("--dispatch", dispatch, "ready-op choice: fifo (by readiness) or priority (placement's priorities)")
      ->check(CLI::IsMember(kDispatchNames))
      ->capture_default_str();
  app.add_option("--links", links, "link model: contention (one transfer at a time per directed link) or unlimited")
      ->check(CLI::IsMember(kLinkNames))
      ->capture_default_str();
  app.add_flag("--no-dedup", no_dedup, "ship a tensor once per consumer instead of once per device");
  app.add_option("--streams", streams, "ops per device at once (0 = the cluster's value)")
      ->check(whole_in(0, kMaxStreams));
  app.add_option("--noise", noise, "log-normal noise sigma on op times (0 = none, at most 3)")->check(finite_in(0, kMaxNoiseSigma));
  app.add_option("--noise-seed", noise_seed, "seed of the noise")->check(seed_number());
  app.add_option("--noise-samples", noise_samples,
                 "with --noise: draws per evaluation; search and tuning minimise their mean, the expected "
                 "makespan, with the same draws for every candidate (default 8)")
      ->check(whole_in(1, kMaxNoiseSamples));
  app.add_flag("--memory", memory, "track peak memory per device");
}

SimOptions SimArgs::options() const {
  // The flags' own checks, again: a job file's keys reach here without CLI11.
  if (streams < 0 || streams > kMaxStreams)
    throw CliError("--streams " + std::to_string(streams) + ": not in range 0 to " + std::to_string(kMaxStreams));
  if (!(noise >= 0 && noise <= kMaxNoiseSigma))
    throw CliError("--noise " + format_fixed(noise, 3) + ": not in range 0 to " + format_fixed(kMaxNoiseSigma, 0));
  if (noise_samples < 0 || noise_samples > kMaxNoiseSamples)  // 0: the default
    throw CliError("--noise-samples " + std::to_string(noise_samples) + ": not in range 1 to " + std::to_string(kMaxNoiseSamples));
  if (sim == "doppler" && (noise > 0 || memory))
    throw CliError(std::string("--sim doppler reproduces the public DOPPLER simulator, which has no ") +
                   (noise > 0 ? "--noise" : "--memory") + ": use the default simulator for it");
  SimOptions o;
  o.doppler = sim == "doppler";
  o.dispatch = *parse_dispatch(dispatch);  // CLI11 checked the names
  o.links = *parse_link_model(links);
  o.dedup_transfers = !no_dedup;
  o.streams = streams;
  o.noise_sigma = noise;
  o.seed = noise_seed;
  o.noise_samples = noise > 0 ? (noise_samples > 0 ? noise_samples : 8) : 1;
  o.track_memory = memory;
  return o;
}

void OutputArgs::add_to(CLI::App& app, bool timelines) {
  app.add_option("-f,--format", format, "output: table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  if (timelines) {
    app.add_option("--trace", trace, "write a Chrome/Perfetto trace of the result (open in ui.perfetto.dev)")->check(file_path());
    app.add_option("--svg", svg, "write an SVG Gantt chart of the result")->check(file_path());
  }
}

Graph load_graph(const ProblemArgs& args) {
  if (args.graph_file.empty() && args.workload.empty())
    throw CliError("give a graph: --graph FILE or --workload NAME (see `gantry workloads`)");
  auto g = args.graph_file.empty() ? make_workload(args.workload, args.seed) : read_graph_file(args.graph_file);
  if (!g) throw CliError(g.error().message);
  return std::move(g).value();
}

Problem load_problem(const ProblemArgs& args) {
  Problem p;
  p.graph = load_graph(args);
  p.graph_label = args.graph_file.empty() ? args.workload : args.graph_file;
  auto c = Cluster::load(args.cluster);
  if (!c) throw CliError(c.error().message);
  p.cluster = std::move(c).value();
  p.costs = std::make_unique<CostTable>(p.graph, p.cluster);
  return p;
}

ProfileTable require_profiles(const Store& store) {
  auto profiles = store.profiles();
  if (!profiles) throw CliError("--profiled: " + profiles.error().message);
  if (profiles.value().empty())
    throw CliError("--profiled: no profiles in " + store.path() + " (run `gantry profile` first)");
  return std::move(profiles).value();
}

ProfileTable load_profiles(const std::string& data_dir) {
  auto store = Store::open_read_only(data_dir.empty() ? default_data_dir() : data_dir);
  if (!store) throw CliError("--profiled: " + store.error().message);
  return require_profiles(*store.value());
}

void add_profiled_flag(CLI::App& cmd, bool& profiled) {
  cmd.add_flag("--profiled", profiled,
               "cost ops and transfers with the store's measured profiles (`gantry profile`) instead of the roofline; "
               "bests tuned this way are stored apart, under the profiles' fingerprint");
}

void use_profiles(Problem& problem, const ProfileTable& profiles) {
  problem.costs = std::make_unique<CostTable>(problem.graph, problem.cluster, &profiles);
}

Placement read_placement_for(const std::string& path, const Problem& problem) {
  auto file = read_placement_file(path);
  if (!file) throw CliError(file.error().message);
  const std::string graph_fp = fingerprint(problem.graph).hex();
  if (!file.value().graph_fingerprint.empty() && file.value().graph_fingerprint != graph_fp)
    throw CliError(path + ": the placement was made for graph " + file.value().graph_fingerprint + ", not for " +
                   problem.graph_label + " (" + graph_fp + ")");
  return file.value().placement;
}

void write_timeline_files(const OutputArgs& out, const Graph& graph, const SimResult& result,
                          const TimelineLabels& labels) {
  for (auto [path, text] : {std::pair{&out.trace, &chrome_trace_json}, std::pair{&out.svg, &svg_gantt}}) {
    if (path->empty()) continue;
    auto s = write_text_file(*path, text(graph, result, labels));
    if (!s) throw CliError(s.error().message);
  }
}

void write_timelines(const OutputArgs& out, const Problem& problem, const SimResult& result, const std::string& title) {
  TimelineLabels labels;
  labels.title = title;
  labels.time_unit = problem.graph.cost_unit();
  for (const Device& d : problem.cluster.devices()) labels.device_names.push_back(d.name + " (" + d.kind + ")");
  write_timeline_files(out, problem.graph, result, labels);
}

std::string format_time(double value, const std::string& unit) {
  char buffer[48];
  if (unit != "s") {
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
    return buffer;
  }
  if (value >= 1e9)  // 30 years: digits past the point say nothing, and %f of 1e300 is 300 digits
    std::snprintf(buffer, sizeof buffer, "%.6g s", value);
  else if (value >= 1)
    std::snprintf(buffer, sizeof buffer, "%.3f s", value);
  else if (value >= 1e-3)
    std::snprintf(buffer, sizeof buffer, "%.3f ms", value * 1e3);
  else
    std::snprintf(buffer, sizeof buffer, "%.3f us", value * 1e6);
  return buffer;
}

std::string format_fixed(double value, int digits) {
  char buffer[48];
  if (std::fabs(value) >= 1e15) std::snprintf(buffer, sizeof buffer, "%.6g", value);  // %f: up to 309 digits, cut off
  else std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string format_unix_time(double unix_seconds) {
  if (!(unix_seconds > 0)) return "-";
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buffer;
}

std::unique_ptr<TempFolder> no_store_folder(bool no_store, const std::string& prefix) {
  if (!no_store) return nullptr;
  try {
    return std::make_unique<TempFolder>(prefix);
  } catch (const std::exception& e) {
    throw CliError(std::string("--no-store: ") + e.what());
  }
}

int visible_gpus(const std::string& program) {
  if (program.empty()) return cuda_device_count();
  auto seen = cuda_devices_seen_by(program);
  if (!seen) throw CliError("--gantry-exec " + program + ": " + seen.error().message);
  return seen.value();
}

int checked_gantry_exec(const std::string& program, const std::string& backend, const Cluster& cluster,
                        const ExecOptions& exec) {
  if (Status can = can_execute_through(backend, cluster, exec); !can)
    throw CliError("--gantry-exec " + program + ": " + can.error().message);
  return visible_gpus(program);
}

void add_gantry_exec_option(CLI::App& cmd, std::string& program, const std::string& when) {
  cmd.add_option("--gantry-exec", program,
                 "measure through this gantry-exec program (the standalone executor, a path or a name on PATH) instead "
                 "of this process's executors: how a gantry whose LibTorch has no CUDA (Debian's) measures on GPUs, "
                 "with a gantry-exec built against a CUDA LibTorch (executor/standalone/)" +
                     (when.empty() ? std::string() : "; " + when));
}

void refuse_gantry_exec_remote(const std::string& program, bool remote) {
  if (remote && !program.empty())
    throw CliError("--gantry-exec is for a run in this process; a coordinator's workers measure with their own "
                   "(gantry worker --gantry-exec)");
}

// --devices cpu:N|cpu:all|cuda:N|cuda:all: the devices measurements run on, a core or a GPU each.
ExecutorDevices parse_executor_devices(const std::string& devices, const std::string& program) {
  if (devices.empty()) {
    if (!program.empty()) throw CliError("--gantry-exec " + program + " needs --devices (the devices it measures on)");
    return {};
  }
  const auto colon = devices.find(':');
  ExecutorDevices out;
  out.backend = devices.substr(0, colon);
  const std::string count = colon == std::string::npos ? "" : devices.substr(colon + 1);
  if ((out.backend != "cpu" && out.backend != "cuda") || count.empty())
    throw CliError("--devices " + devices + ": expected cpu:N, cpu:all, cuda:N or cuda:all");
  const bool cpu = out.backend == "cpu";
  out.program = program;
  // The program runs once now, on either backend: one that cannot start fails here, not at every measurement.
  if (!program.empty()) out.program_gpus = visible_gpus(program);
  const int present = cpu ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : out.gpus();
  if (!cpu && present == 0)
    throw CliError("--devices " + devices + ": no CUDA device is visible" +
                   (program.empty() ? std::string(" (or this build's LibTorch has no CUDA: a gantry-exec built against one "
                                                  "can measure for it, --gantry-exec PATH)")
                                    : " to " + program));
  if (count == "all") {
    out.count = present;
    return out;
  }
  try {
    std::size_t used = 0;
    out.count = std::stoi(count, &used);
    if (used != count.size()) out.count = 0;
  } catch (const std::exception&) {
    out.count = 0;
  }
  if (out.count < 1) throw CliError("--devices " + devices + ": the device count must be a whole number >= 1");
  // On one GPU, N devices are N partitions of it (executor/cuda/); cores are not shared.
  if (cpu && out.count > present)
    throw CliError("--devices " + devices + ": needs " + std::to_string(out.count) + " cores, this machine has " +
                   std::to_string(present));
  return out;
}

}  // namespace gantry::cli
