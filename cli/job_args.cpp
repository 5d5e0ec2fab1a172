#include "cli/job_args.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "actors/net/client.hpp"
#include "cli/duration.hpp"
#include "cli/job_listing.hpp"
#include "cli/stop_signals.hpp"
#include "core/cluster.hpp"
#include "core/cluster_presets.hpp"
#include "core/graph_io.hpp"
#include "core/json_util.hpp"
#include "core/yaml_keys.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

TuneOptions tune_options(const TuneArgs& args) {
  TuneOptions options;
  options.data_dir = args.data.empty() ? default_data_dir() : args.data;
  options.rollouts = args.rollouts;
  options.seed = args.problem.seed;
  auto seconds = parse_duration(args.budget);
  if (!seconds) throw CliError("--budget: " + seconds.error().message);
  // --evals alone means "until N evaluations"; with --budget both limits apply.
  options.budget_seconds = args.evals > 0 && !args.budget_given ? 0 : seconds.value();
  options.budget_evaluations = args.evals;
  if (args.evals < 0) throw CliError("--evals " + std::to_string(args.evals) + ": must be >= 0");
  if (!args.patience.empty()) {
    auto p = parse_duration(args.patience);
    if (!p) throw CliError("--patience: " + p.error().message);
    options.patience_seconds = p.value();
  }
  auto batch = parse_duration(args.batch);
  if (!batch || batch.value() <= 0) throw CliError("--batch " + args.batch + ": a duration above 0 (e.g. 0.2s)");
  if (batch.value() > kLongestBatch)
    throw CliError("--batch " + args.batch + ": at most " + format_seconds(kLongestBatch) +
                   " (a running batch runs to its end: it is the step of progress and of a cancel)");
  options.batch_seconds = batch.value();
  if (args.batch_evals < 0 || args.batch_evals > kMostBatchEvaluations)
    throw CliError("--batch-evals " + std::to_string(args.batch_evals) + ": must be 0 to " + std::to_string(kMostBatchEvaluations) +
                   " (a running batch runs to its end)");
  options.batch_evaluations = args.batch_evals;
  if (args.parallelism < 0 || args.parallelism > kMostParallelism)
    throw CliError("--parallelism " + std::to_string(args.parallelism) + ": must be 0 (every slot) to " + std::to_string(kMostParallelism));
  return options;
}

namespace {

// One key of a job file, converted as its flag would be; the error names the file and the key.
template <class T>
void read_key(const YAML::Node& root, const std::string& path, const char* key, T& out) {
  const YAML::Node node = root[key];
  if (!node) return;
  try {
    out = node.as<T>();
  } catch (const YAML::Exception&) {
    throw CliError(path + ": key \"" + key + "\": cannot read \"" + YAML::Dump(node) + "\" as a " +
                   (std::is_same<T, std::string>::value ? "string" : std::is_same<T, bool>::value ? "true/false" : "number"));
  }
}

const char* const kJobKeys[] = {"kind", "graph", "workload", "cluster", "seed", "sim", "dispatch", "links", "no-dedup",
                                "streams", "noise", "noise-seed", "noise-samples", "memory", "budget", "evals",
                                "patience", "batch", "batch-evals", "priority", "parallelism"};

}  // namespace

namespace {

YAML::Node load_job_file(const std::string& path) {
  auto text = read_text_file(path);  // its errors name the path and why (a directory, no such file)
  if (!text) throw CliError("job file " + text.error().message);
  YAML::Node root;
  try {
    root = YAML::Load(text.value());
  } catch (const YAML::Exception& e) {
    throw CliError(path + ":" + std::to_string(e.mark.line + 1) + ": not YAML: " + e.msg);
  }
  if (!root.IsMap()) throw CliError(path + ": a job file is a map of settings (see configs/jobs/)");
  if (Status once = check_unique_keys(root, path); !once) throw CliError(once.error().message);
  return root;
}

}  // namespace

std::string path_from_job_file(const std::string& job_file, const std::string& path) {
  if (path.empty() || !std::filesystem::path(path).is_relative()) return path;
  return (std::filesystem::path(job_file).parent_path() / path).string();
}

bool names_cluster_file(const std::string& cluster) {
  if (cluster.empty() || cluster.rfind("identical:", 0) == 0) return false;
  const auto& presets = cluster_presets();
  return std::none_of(presets.begin(), presets.end(), [&](const ClusterPreset& p) { return cluster == p.name; });
}

JobFile read_job_file_settings(const std::string& path) {
  const YAML::Node root = load_job_file(path);
  JobFile file;
  file.path = path;
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    if (!item.second.IsScalar()) throw CliError(path + ": key \"" + key + "\": expected a single value");
    file.settings.emplace_back(key, item.second.as<std::string>());
    if (key == "kind") file.kind = file.settings.back().second;
  }
  return file;
}

void read_job_file(const std::string& path, TuneArgs& args) {
  const YAML::Node root = load_job_file(path);
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    bool known = false;
    for (const char* k : kJobKeys) known = known || key == k;
    if (!known) throw CliError(path + ": unknown key \"" + key + "\" (keys are `gantry tune`'s flag names)");
  }
  std::string kind = "tune";
  read_key(root, path, "kind", kind);
  if (kind != "tune")
    throw CliError(path + ": key \"kind\": \"" + kind + "\" is not a job kind a job file describes (tune, pipeline)");
  read_key(root, path, "graph", args.problem.graph_file);
  read_key(root, path, "workload", args.problem.workload);
  args.problem.graph_file = path_from_job_file(path, args.problem.graph_file);
  if (!args.problem.graph_file.empty() && !args.problem.workload.empty())
    throw CliError(path + ": give either \"graph\" or \"workload\", not both");
  read_key(root, path, "cluster", args.problem.cluster);
  if (names_cluster_file(args.problem.cluster)) args.problem.cluster = path_from_job_file(path, args.problem.cluster);
  if (!args.problem.cluster.empty())
    if (auto cluster = Cluster::load(args.problem.cluster); !cluster)
      throw CliError(path + ": key \"cluster\": " + cluster.error().message);
  read_key(root, path, "seed", args.problem.seed);
  read_key(root, path, "sim", args.sim.sim);
  read_key(root, path, "dispatch", args.sim.dispatch);
  read_key(root, path, "links", args.sim.links);
  read_key(root, path, "no-dedup", args.sim.no_dedup);
  read_key(root, path, "streams", args.sim.streams);
  read_key(root, path, "noise", args.sim.noise);
  read_key(root, path, "noise-seed", args.sim.noise_seed);
  read_key(root, path, "noise-samples", args.sim.noise_samples);
  read_key(root, path, "memory", args.sim.memory);
  args.budget_given = static_cast<bool>(root["budget"]);
  read_key(root, path, "budget", args.budget);
  read_key(root, path, "evals", args.evals);
  read_key(root, path, "patience", args.patience);
  read_key(root, path, "batch", args.batch);
  read_key(root, path, "batch-evals", args.batch_evals);
  read_key(root, path, "priority", args.priority);
  read_key(root, path, "parallelism", args.parallelism);
  for (auto [value, name, names] : {std::tuple{&args.sim.sim, "sim", &kSimNames},
                                    std::tuple{&args.sim.dispatch, "dispatch", &kDispatchNames},
                                    std::tuple{&args.sim.links, "links", &kLinkNames}}) {
    if (std::find(names->begin(), names->end(), *value) != names->end()) continue;
    std::string list;
    for (const std::string& n : *names) list += (list.empty() ? "" : ", ") + n;
    throw CliError(path + ": key \"" + name + "\": \"" + *value + "\" is not one of " + list);
  }
  try {  // the values as their flags' checks see them, before anything is sent
    (void)args.sim.options();
    (void)tune_options(args);
  } catch (const CliError& e) {
    throw CliError(path + ": " + e.what() + " (job file keys are `gantry tune`'s flag names)");
  }
}

namespace {

std::string flag_or_env(const std::string& flag, const char* env, const std::string& fallback) {
  if (!flag.empty()) return flag;
  if (const char* value = std::getenv(env); value && *value) return value;
  return fallback;
}

}  // namespace

void RemoteArgs::add_to(CLI::App& cmd, const std::string& endpoint_help) {
  cmd.add_option("--coordinator", endpoint,
                 endpoint_help.empty() ? "the coordinator (default: $GANTRY_COORDINATOR or tcp://127.0.0.1:7700)" : endpoint_help);
  cmd.add_option("--timeout", timeout, "seconds to wait for the coordinator's answer")->check(finite_in(0.1, 3600))->capture_default_str();
  cmd.add_option("--curve-key", curve_key, "this client's CURVE key pair (gantry keys generate; default: $GANTRY_CURVE_KEY)");
  cmd.add_option("--coordinator-key", coordinator_key,
                 "the coordinator's CURVE public key (its .pub file; default: $GANTRY_COORDINATOR_KEY)");
}

CurveSettings curve_settings(const std::string& own_key_file, const std::string& server_key_file,
                             const std::string& own_flag, const std::string& server_flag) {
  CurveSettings curve;
  if (own_key_file.empty() && server_key_file.empty()) return curve;
  if (own_key_file.empty() || server_key_file.empty())
    throw CliError("CURVE needs both " + own_flag + " and " + server_flag + " (or neither)");
  auto own = read_curve_key_pair(own_key_file);
  if (!own) throw CliError(own_flag + ": " + own.error().message);
  auto server = read_curve_public_key(server_key_file);
  if (!server) throw CliError(server_flag + ": " + server.error().message);
  curve.enabled = true;
  curve.own = own.value();
  curve.server_public_key = server.value();
  return curve;
}

ClientOptions RemoteArgs::client() const {
  ClientOptions options;
  options.endpoint = flag_or_env(endpoint, "GANTRY_COORDINATOR", "tcp://127.0.0.1:7700");
  options.timeout_seconds = timeout;
  options.curve = curve_settings(flag_or_env(curve_key, "GANTRY_CURVE_KEY", ""),
                                 flag_or_env(coordinator_key, "GANTRY_COORDINATOR_KEY", ""), "--curve-key",
                                 "--coordinator-key");
  return options;
}

namespace {

// Follows a job until it ends; a line on stderr whenever its state changes.
JobRecord wait_for_job(const ClientOptions& client, const std::string& id) {
  std::string last_state, last_message;
  long last_evaluations = 0;
  auto last_line = std::chrono::steady_clock::now();
  StopSignals signals;
  bool cancel_sent = false;
  for (;;) {
    if (StopSignals::requested().load() && !cancel_sent) {  // Ctrl-C while waiting cancels the job
      wire::Request cancel;
      cancel.job = id;
      auto r = call_coordinator(client, wire::Type::cancel, cancel);
      std::cerr << "gantry: " << (r ? "cancelling job " + id : "cannot cancel job " + id + ": " + r.error().message) << "\n";
      cancel_sent = true;
    }
    wire::Request request;
    request.job = id;
    auto reply = call_coordinator(client, wire::Type::jobs, request);
    if (!reply) throw CliError("following job " + id + ": " + reply.error().message);
    auto jobs = wire::job_records_from_json(reply.value().data);
    if (!jobs || jobs.value().size() != 1) throw CliError("following job " + id + ": the coordinator sent no record of it");
    const JobRecord& job = jobs.value().front();
    const std::string state = to_string(job.state);
    if (state != last_state) std::cerr << "job " << id << " " << state << "\n";
    last_state = state;
    // A running job's live figures (the coordinator's copy), every 2 s while they change; a
    // measurement's status (waiting for a worker) at once.
    const auto now = std::chrono::steady_clock::now();
    if (job.state == JobState::running && job.kind == "measure" && !job.message.empty() && job.message != last_message) {
      std::cerr << "job " << id << ": " << job.message << "\n";
      last_message = job.message;
      last_line = now;
    }
    if (job.state == JobState::running && job.evaluations != last_evaluations && now - last_line >= std::chrono::seconds(2)) {
      char best[48] = "";
      if (job.best_makespan > 0) std::snprintf(best, sizeof best, ", best %.6g", job.best_makespan);
      std::cerr << "job " << id << ": " << job.evaluations << (job.kind == "train" ? " episodes" : " evaluations") << best
                << (job.message.empty() ? "" : ", " + job.message) << "\n";
      last_evaluations = job.evaluations;
      last_message = job.message;
      last_line = now;
    }
    if (job.state != JobState::queued && job.state != JobState::running) return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

void submit_job(const TuneArgs& args, const RemoteArgs& remote, bool wait) {
  Problem problem = load_problem(args.problem);
  TuneOptions options = tune_options(args);
  ProfileTable profiles;
  if (args.profiled) {
    profiles = load_profiles(options.data_dir);
    use_profiles(problem, profiles);
  }
  TuneProblem tune_problem{problem.graph, problem.cluster, *problem.costs, args.sim.options(), problem.graph_label,
                           graph_to_json(problem.graph, -1), args.profiled ? &profiles : nullptr};
  JobSpec spec = make_job_spec(tune_problem, options);
  spec.priority = args.priority;
  spec.parallelism = args.parallelism;
  submit_job_spec(spec, remote, wait, args.out.json());
}

void add_priority_option(CLI::App& cmd, int& priority) {
  cmd.add_option("--priority", priority, "with --coordinator: higher runs first (default 0)");
}

namespace {

// A submit that got no reply is sent again with the same key: the user hears of it.
void say_retry(const std::string& line) { std::cerr << "gantry: " << line << std::endl; }

// The job's id at the coordinator.
std::string submit_remote(const JobSpec& spec, const ClientOptions& client) {
  wire::Request request;
  request.spec = spec;
  auto reply = submit_to_coordinator(client, request, 3, say_retry);
  if (!reply) throw CliError("submitting to " + client.endpoint + ": " + reply.error().message);
  const std::string id = nlohmann::json::parse(reply.value().data, nullptr, false).value("job", "");
  if (id.empty()) throw CliError("the coordinator at " + client.endpoint + " accepted the job but sent no job id");
  return id;
}

}  // namespace

JobRecord follow_remote_job(const JobSpec& spec, const RemoteArgs& remote) {
  const ClientOptions client = remote.client();
  const std::string id = submit_remote(spec, client);
  std::cerr << "job " << id << " submitted to " << client.endpoint << " (Ctrl-C cancels it)\n";
  return wait_for_job(client, id);
}

void submit_job_spec(const JobSpec& spec, const RemoteArgs& remote, bool wait, bool json,
                     const std::function<void(const JobRecord&)>& on_stored) {
  if (wait) {
    const JobRecord job = follow_remote_job(spec, remote);
    print_jobs(std::cout, {job}, json, "at " + remote.client().endpoint);
    std::cout.flush();
    if (on_stored && (job.state == JobState::complete || job.state == JobState::cancelled)) on_stored(job);
    if (job.state == JobState::cancelled) throw CliExit{kExitCancelled, "job " + job.id + " cancelled; its best so far is stored by the coordinator"};
    if (job.state != JobState::complete) throw CliExit{1, "job " + job.id + " " + to_string(job.state) + ": " + job.message};
    return;
  }
  const ClientOptions client = remote.client();
  const std::string& endpoint = client.endpoint;
  const std::string id = submit_remote(spec, client);
  if (json)
    std::cout << nlohmann::json{{"job", id}, {"coordinator", endpoint}}.dump(2) << "\n";
  else
    std::cout << id << "\n";
}

}  // namespace gantry::cli
