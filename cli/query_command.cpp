// gantry query: answers from the store, read-only (works while a tuning job writes it), or from a
// coordinator's store with --coordinator (cli/schedule_source.hpp).
#include <cctype>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/job_args.hpp"
#include "cli/learning_curve.hpp"
#include "cli/pipeline_args.hpp"
#include "cli/policy_files.hpp"
#include "cli/schedule_source.hpp"
#include "cli/text_table.hpp"
#include "core/hex.hpp"
#include "core/pipeline_scheme.hpp"
#include "core/placement.hpp"
#include "learner/learning_curve.hpp"
#include "sim/model_version.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "tuner/pipeline/pipeline_candidate.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct QueryArgs {
  ProblemArgs problem;
  SimArgs sim;
  OutputArgs out;
  std::string data, fingerprint;
  RemoteArgs remote;  // ask a coordinator instead of the local store
  PipelineArgs pipeline;       // --model ...: a pipeline scheme's best (`gantry pipeline tune`)
  bool cluster_given = false;  // else a pipeline's cluster is pipeline tune's default
  bool profiled = false;       // the best of a job tuned with --profiled
};

std::unique_ptr<ScheduleSource> open_source(const QueryArgs& args) {
  if (!args.remote.endpoint.empty()) return remote_schedules(args.remote);
  return local_schedules(args.data);
}

bool is_hex(const std::string& text) { return text.size() <= 32 && all_hex_digits(text); }

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// --fingerprint GRAPH:RUNTIME, each 32 hex digits or a prefix (as `query list` prints them, 8
// digits each): a prefix must match exactly one stored best.
std::pair<Fingerprint, Fingerprint> fingerprint_key(ScheduleSource& source, const std::string& text) {
  const auto colon = text.find(':');
  const std::string graph = colon == std::string::npos ? "" : lower(text.substr(0, colon));
  const std::string runtime = colon == std::string::npos ? "" : lower(text.substr(colon + 1));
  if (!is_hex(graph) || !is_hex(runtime))
    throw CliError("--fingerprint '" + text +
                   "': expected GRAPH:RUNTIME, two hex fingerprints (32 digits each, or the prefixes `gantry query list` prints)");
  std::pair<Fingerprint, Fingerprint> key;
  if (graph.size() == 32 && runtime.size() == 32) {
    Fingerprint::from_hex(graph, key.first);
    Fingerprint::from_hex(runtime, key.second);
    return key;
  }
  const std::vector<ScheduleRecord> list = source.list(graph);
  std::vector<const ScheduleRecord*> matches;
  for (const auto& r : list)
    if (r.cluster.hex().compare(0, runtime.size(), runtime) == 0) matches.push_back(&r);
  if (matches.empty())
    throw CliError("--fingerprint '" + text + "': no stored best " + source.where() +
                   " matches (`gantry query list` shows what is stored)");
  if (matches.size() > 1) {
    std::string names;
    for (const auto* r : matches) names += "\n  " + r->graph.hex() + ":" + r->cluster.hex() + " (" + r->graph_label + ")";
    throw CliError("--fingerprint '" + text + "' matches " + std::to_string(matches.size()) +
                   " stored bests; give more digits:" + names);
  }
  return {matches[0]->graph, matches[0]->cluster};
}

// The (graph, runtime) key: from --fingerprint GRAPH:RUNTIME, or computed from the graph, cluster
// and simulator flags exactly as `gantry tune` computed it. `older` receives the keys the same
// problem had under older model versions (newest first), to tell a stale best from none.
std::pair<Fingerprint, Fingerprint> key_of(ScheduleSource& source, const QueryArgs& args,
                                           std::vector<std::pair<int, Fingerprint>>* older = nullptr) {
  if (!args.fingerprint.empty()) return fingerprint_key(source, args.fingerprint);
  if (names_pipeline(args.pipeline)) {  // computed as `gantry pipeline tune` computes it
    PipelineArgs pipeline = args.pipeline;
    if (args.cluster_given) pipeline.cluster = args.problem.cluster;
    pipeline.links = args.sim.links;
    check_flags(pipeline);
    const PipelineSource problem = pipeline_source(pipeline, nullptr);
    return {problem.problem, problem.runtime};
  }
  Problem problem = load_problem(args.problem);
  const SimOptions options = args.sim.options();
  if (args.profiled) {  // the profiles' current content: a best tuned with other profiles is another key
    const ProfileTable profiles = load_profiles(args.data);
    if (older)
      for (int v = kModelVersion - 1; v >= 1; --v) older->push_back({v, runtime_fingerprint(problem.cluster, options, &profiles, v)});
    return {gantry::fingerprint(problem.graph), runtime_fingerprint(problem.cluster, options, &profiles)};
  }
  if (older)
    for (int v = kModelVersion - 1; v >= 1; --v) older->push_back({v, runtime_fingerprint(problem.cluster, options, v)});
  return {gantry::fingerprint(problem.graph), runtime_fingerprint(problem.cluster, options)};
}

int current_version(const ScheduleRecord& r) { return r.is_pipeline() ? kPipelineModelVersion : kModelVersion; }

bool is_stale(const ScheduleRecord& r) { return r.model_version < current_version(r); }

std::string stale_note(const ScheduleRecord& r) {
  return "stale: computed by simulator model version " + std::to_string(r.model_version) + ", this gantry has " +
         std::to_string(current_version(r)) +
         (r.is_pipeline() ? " (`gantry pipeline tune` with the same flags finds a current one)"
                          : " (`gantry db resimulate` recomputes it)");
}

// The latest real measurement (gantry execute --best), or null.
nlohmann::json measured_json(const ScheduleRecord& r) {
  if (r.measured_runs <= 0) return nullptr;
  return {{"median", r.measured}, {"runs", r.measured_runs}, {"backend", r.measured_backend}, {"at", r.measured_at}};
}

std::string measured_text(const ScheduleRecord& r) {
  if (r.measured_runs <= 0) return "never (`gantry execute --best` measures it)";
  return format_time(r.measured, "s") + " (median of " + std::to_string(r.measured_runs) + " runs on the " +
         r.measured_backend + " backend, " + format_unix_time(r.measured_at) + ")";
}

nlohmann::json record_json(const ScheduleRecord& r) {
  return {{"graph_fingerprint", r.graph.hex()}, {"runtime_fingerprint", r.cluster.hex()}, {"graph", r.graph_label},
          {"cluster", r.cluster_name}, {"sim", r.sim}, {"method", r.method}, {"makespan", r.makespan},
          {"lower_bound", r.lower_bound}, {"unit", r.unit}, {"job", r.job_id}, {"found_at", r.found_at},
          {"evaluations", r.evaluations}, {"model_version", r.model_version}, {"stale", is_stale(r)},
          {"placement", r.placement.device}, {"measured", measured_json(r)}};
}

// A pipeline best: the record with its scheme and the candidate that builds it.
nlohmann::json best_json(const ScheduleRecord& r) {
  nlohmann::json j = record_json(r);
  if (r.is_pipeline()) {
    j.erase("placement");
    j["iteration_time"] = r.makespan;
    j["scheme"] = nlohmann::json::parse(r.scheme, nullptr, false);
    j["candidate"] = nlohmann::json::parse(r.candidate, nullptr, false);
  }
  return j;
}

ScheduleRecord require_best(ScheduleSource& source, const std::pair<Fingerprint, Fingerprint>& key,
                            const std::vector<std::pair<int, Fingerprint>>& older = {}) {
  if (auto best = source.best(key.first, key.second)) return *best;
  for (const auto& [version, runtime] : older)
    if (auto stale = source.best(key.first, runtime))
      throw CliError("the only stored placement for graph " + key.first.hex() + " on this runtime " + source.where() +
                     " (runtime " + runtime.hex() + ", makespan " + format_time(stale->makespan, stale->unit) + ") is " +
                     stale_note(*stale));
  throw CliError("no stored placement or scheme for " + key.first.hex() + " on runtime " + key.second.hex() + " " +
                 source.where() +
                 " (run `gantry tune` or `gantry pipeline tune` first; a job tuned with --profiled is found with "
                 "--profiled; `gantry query list` shows what is stored)" +
                 other_runtimes_note(source.list(key.first.hex()), key.second));
}

void add_key_options(CLI::App& cmd, QueryArgs& args) {
  cmd.add_option("--data", args.data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  cmd.add_option("--fingerprint", args.fingerprint,
                 "GRAPH:RUNTIME fingerprints instead of --graph/--cluster (full, or the prefixes `query list` prints)");
  add_profiled_flag(cmd, args.profiled);
  args.problem.add_to(cmd);
  args.sim.add_to(cmd);
  args.out.add_to(cmd, false);
  add_pipeline_model_options(cmd, args.pipeline);
}

void print_pipeline_best(const ScheduleRecord& r) {
  auto candidate = candidate_from_json(r.candidate, "the stored candidate");
  const std::string shape = candidate ? describe_candidate(candidate.value(), static_cast<int>(candidate.value().rules.in_flight_limit.size()))
                                      : "-";
  TextTable t({"field", "value"});
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"pipeline", r.graph_label + " (" + r.graph.hex() + ")"}, {"cluster", r.cluster_name + " (" + r.cluster.hex() + ")"},
           {"iteration time", format_time(r.makespan, "s")}, {"lower bound", format_time(r.lower_bound, "s")},
           {"scheme", shape}, {"method", r.method},
           {"found", format_unix_time(r.found_at) + (r.job_id.empty() ? "" : " by " + r.job_id)},
           {"evaluations", std::to_string(r.evaluations)},
           {"model version", std::to_string(r.model_version) + (is_stale(r) ? " (" + stale_note(r) + ")" : "")},
           {"export", "`gantry query export` with the same flags writes the scheme (for pipeline simulate --scheme)"}})
    t.add({k, v});
  t.print(std::cout);
}

void run_best(const QueryArgs& args) {
  auto source = open_source(args);
  std::vector<std::pair<int, Fingerprint>> older;
  const auto key = key_of(*source, args, &older);
  const ScheduleRecord r = require_best(*source, key, older);
  if (args.out.json()) {
    std::cout << best_json(r).dump(2) << "\n";
    return;
  }
  if (r.is_pipeline()) {
    print_pipeline_best(r);
    return;
  }
  TextTable t({"field", "value"});
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"graph", r.graph_label + " (" + r.graph.hex() + ")"}, {"cluster", r.cluster_name + ", runtime " + r.sim},
           {"makespan", format_time(r.makespan, r.unit) + " simulated"}, {"measured", measured_text(r)},
           {"lower bound", format_time(r.lower_bound, r.unit)},
           {"method", r.method}, {"found", format_unix_time(r.found_at) + " by " + r.job_id},
           {"evaluations", std::to_string(r.evaluations)},
           {"model version", std::to_string(r.model_version) + (is_stale(r) ? " (" + stale_note(r) + ")" : "")}})
    t.add({k, v});
  t.print(std::cout);
}

void run_list(const QueryArgs& args) {
  auto source = open_source(args);
  // --fingerprint filters: a graph prefix, or GRAPH:RUNTIME prefixes as this listing prints them.
  std::string graph_prefix = args.fingerprint, runtime_prefix;
  if (const auto colon = graph_prefix.find(':'); colon != std::string::npos) {
    runtime_prefix = lower(graph_prefix.substr(colon + 1));
    graph_prefix = graph_prefix.substr(0, colon);
    if (!runtime_prefix.empty() && !is_hex(runtime_prefix))
      throw CliError("--fingerprint '" + args.fingerprint + "': the runtime part is not a hex prefix");
  }
  std::vector<ScheduleRecord> list;
  for (auto& r : source->list(graph_prefix))
    if (r.cluster.hex().compare(0, runtime_prefix.size(), runtime_prefix) == 0) list.push_back(std::move(r));
  if (args.out.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : list) {
      nlohmann::json item = record_json(r);
      item.erase("placement");
      j.push_back(item);
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  TextTable t({"graph", "cluster", "runtime", "makespan", "x bound", "method", "found", "key", "status"});
  long stale = 0;
  for (const auto& r : list) {
    char ratio[16];
    std::snprintf(ratio, sizeof ratio, "%.3f", r.lower_bound > 0 ? r.makespan / r.lower_bound : 0.0);
    t.add({r.graph_label, r.cluster_name, r.sim, format_time(r.makespan, r.unit), ratio, r.method, format_unix_time(r.found_at),
           r.graph.hex().substr(0, 8) + ":" + r.cluster.hex().substr(0, 8),
           is_stale(r) ? "stale (model v" + std::to_string(r.model_version) + ")" : "current"});
    stale += is_stale(r);
  }
  t.print(std::cout);
  std::cout << list.size() << " stored plan(s) " << source->where();
  if (stale > 0)
    std::cout << ", " << stale << " stale (computed by an older simulator model; `gantry db resimulate` recomputes "
              << "placements, `gantry pipeline tune` with the same flags pipeline schemes)";
  std::cout << "\n";
}

void run_history(const QueryArgs& args) {
  auto source = open_source(args);
  std::vector<std::pair<int, Fingerprint>> older;
  const auto key = key_of(*source, args, &older);
  const ScheduleRecord best = require_best(*source, key, older);
  const std::vector<HistoryRecord> history = source->history(key.first, key.second);
  if (args.out.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& h : history)
      j.push_back({{"time", h.time}, {"makespan", h.makespan}, {"method", h.method}, {"job", h.job_id},
                   {"evaluations", h.evaluations}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  TextTable t({"when", "makespan", "method", "evaluations", "job"});
  for (const auto& h : history)
    t.add({format_unix_time(h.time), format_time(h.makespan, best.unit), h.method, std::to_string(h.evaluations), h.job_id});
  t.print(std::cout);
}

void run_export(const QueryArgs& args) {
  auto source = open_source(args);
  std::vector<std::pair<int, Fingerprint>> older;
  const auto key = key_of(*source, args, &older);
  const ScheduleRecord r = require_best(*source, key, older);
  if (r.is_pipeline()) {  // in the layout --save-scheme writes
    auto scheme = scheme_from_json(r.scheme, "the stored scheme in " + source->where());
    if (!scheme) throw CliError(scheme.error().message);
    std::cout << scheme_to_json(scheme.value()) << "\n";
    return;
  }
  std::cout << placement_to_json(r.placement, r.graph.hex(), r.cluster_name) << "\n";
}

// A policy's record as `query policies` and `query policy` print it (no weights, no curve).
nlohmann::json policy_json(const PolicyRecord& p) {
  return {{"name", p.name}, {"version", p.version}, {"stage", p.stage}, {"ablation", p.ablation},
          {"graphs", p.graphs}, {"cluster", p.cluster_name}, {"devices", p.devices}, {"episodes", p.episodes},
          {"seconds", p.seconds}, {"best_ratio", p.best_ratio}, {"greedy_ratio", p.greedy_ratio},
          {"parent", p.parent}, {"created", p.created}, {"job", p.job}};
}

// Every stored policy version: what it was trained on and how far it got against the teacher.
void run_policies(const QueryArgs& args) {
  auto source = open_source(args);
  const std::vector<PolicyRecord> list = source->policies();
  if (args.out.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const PolicyRecord& p : list) j.push_back(policy_json(p));
    std::cout << j.dump(2) << "\n";
    return;
  }
  TextTable t({"policy", "stage", "ablation", "devices", "episodes", "best/teacher", "greedy/teacher", "from", "created", "graphs"});
  for (const PolicyRecord& p : list)
    t.add({p.name + ":" + std::to_string(p.version), p.stage, p.ablation, p.devices > 0 ? std::to_string(p.devices) : "mixed",
           std::to_string(p.episodes),
           format_fixed(p.best_ratio, 3), format_fixed(p.greedy_ratio, 3), p.parent.empty() ? "-" : p.parent,
           format_unix_time(p.created), p.graphs});
  t.print(std::cout);
  std::cout << list.size() << " policy version(s) " << source->where() << "\n";
}

struct PolicyQueryArgs {
  std::string policy, job, save, curve, data;
  OutputArgs out;
  RemoteArgs remote;
};

// One stored policy: what it was trained on and how its training went, and its weights and learning
// curve written to files.
void run_policy(const PolicyQueryArgs& args) {
  check_curve_path(args.curve);
  auto source = args.remote.endpoint.empty() ? local_schedules(args.data) : remote_schedules(args.remote);
  const std::optional<PolicyRecord> found = args.job.empty() ? source->policy(args.policy) : source->policy_of_job(args.job);
  if (!found)
    throw CliError((args.job.empty() ? "policy " + args.policy + " is not stored " : "job " + args.job + " stored no policy ") +
                   source->where() + " (gantry query policies lists what is)");
  const PolicyRecord& p = *found;
  auto curve = learning_curve_from_csv(p.curve, "policy " + p.name + ":" + std::to_string(p.version));
  const std::vector<CurvePoint> points = p.curve.empty() || !curve ? std::vector<CurvePoint>{} : curve.value();
  const std::string curve_problem = p.curve.empty() ? "none stored" : !curve ? "unreadable: " + curve.error().message : "";
  if (args.out.json()) {
    nlohmann::json j = policy_json(p);
    j["bytes"] = p.weights.size();
    j["curve"] = nlohmann::json::array();
    if (!curve_problem.empty()) j["curve_problem"] = curve_problem;
    for (const CurvePoint& c : points)
      j["curve"].push_back({{"episodes", c.episodes}, {"seconds", c.seconds}, {"version", c.version},
                            {"mean_ratio", c.mean_ratio}, {"best_ratio", c.best_ratio}, {"match", c.match},
                            {"entropy", c.entropy}, {"loss", c.loss}, {"episodes_per_second", c.episodes_per_second}});
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "policy   " << p.name << ":" << p.version << " (" << p.ablation << ", " << p.stage << ", "
              << (p.devices > 0 ? std::to_string(p.devices) + " devices" : "mixed device counts") << ", "
              << p.weights.size() << " bytes)\n"
              << "graphs   " << p.graphs << " on " << p.cluster_name << "\n"
              << "trained  " << p.episodes << " episodes, " << format_fixed(p.seconds, 1) << " s"
              << (p.job.empty() ? "" : " by job " + p.job) << (p.parent.empty() ? "" : ", from " + p.parent) << ", "
              << format_unix_time(p.created) << "\n"
              << "reached  best " << format_fixed(p.best_ratio, 3) << "x, greedy " << format_fixed(p.greedy_ratio, 3)
              << "x the teacher's makespan\n";
    if (!points.empty())
      std::cout << "curve    " << points.size() << " points: mean sampled " << format_fixed(points.front().mean_ratio, 3)
                << "x -> " << format_fixed(points.back().mean_ratio, 3) << "x the teacher over "
                << points.back().episodes << " episodes\n";
    else
      std::cout << "curve    " << (curve_problem.empty() ? "no points" : curve_problem) << "\n";
  }
  write_policy_files(p, args.save, args.curve);
}

}  // namespace

void add_query_command(CLI::App& app) {
  CLI::App* query = app.add_subcommand("query", "read the store (local, or a coordinator's): best plans, their history, exports");
  query->require_subcommand(1);
  struct Verb {
    const char* name;
    const char* help;
    void (*run)(const QueryArgs&);
  };
  for (const Verb& verb : {Verb{"best", "the best known placement of a graph on a cluster", run_best},
                           Verb{"list", "every stored best (--fingerprint filters by graph prefix)", run_list},
                           Verb{"history", "every improvement of a graph's best on a cluster", run_history},
                           Verb{"export", "the best placement as a placement JSON file (for `gantry simulate`)", run_export}}) {
    auto args = std::make_shared<QueryArgs>();
    CLI::App* cmd = query->add_subcommand(verb.name, verb.help);
    add_key_options(*cmd, *args);
    args->remote.add_to(*cmd, "ask this coordinator (tcp://HOST:PORT) instead of the local store");
    cmd->get_option("--coordinator")->excludes("--data");
    auto run = verb.run;
    cmd->callback([cmd, args, run] {
      note_given(*cmd, args->pipeline);
      args->cluster_given = cmd->get_option("--cluster")->count() > 0;
      run(*args);
    });
  }
  auto args = std::make_shared<QueryArgs>();
  args->data = default_data_dir();
  CLI::App* policies = query->add_subcommand("policies", "every stored learned policy version (`gantry train`)");
  policies->add_option("--data", args->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  policies->add_option("-f,--format", args->out.format, "output: table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  args->remote.add_to(*policies, "ask this coordinator (tcp://HOST:PORT) instead of the local store");
  policies->get_option("--coordinator")->excludes("--data");
  policies->callback([args] { run_policies(*args); });

  auto pargs = std::make_shared<PolicyQueryArgs>();
  pargs->data = default_data_dir();
  CLI::App* policy = query->add_subcommand("policy", "one stored policy: how it was trained, its weights and learning curve as files");
  policy->add_option("policy", pargs->policy, "NAME[:VERSION] (the newest version without one)");
  policy->add_option("--job", pargs->job, "the policy this job stored (gantry jobs lists them) instead of a name")->excludes("policy");
  policy->add_option("--save", pargs->save, "write its weights to this file (.policy; for --policy and --init)");
  policy->add_option("--curve", pargs->curve, "write its training run's learning curve (.csv or .svg)")->check(file_path());
  policy->add_option("--data", pargs->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  policy->add_option("-f,--format", pargs->out.format, "output: table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  pargs->remote.add_to(*policy, "ask this coordinator (tcp://HOST:PORT) instead of the local store");
  policy->get_option("--coordinator")->excludes("--data");
  policy->callback([pargs] {
    if (pargs->policy.empty() && pargs->job.empty()) throw CliError("gantry query policy: name a policy (NAME[:VERSION]) or --job ID");
    run_policy(*pargs);
  });
}

}  // namespace gantry::cli
