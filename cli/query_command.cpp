// gantry query: answers from the store, read-only (works while a tuning job writes it).
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "core/placement.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct QueryArgs {
  ProblemArgs problem;
  SimArgs sim;
  OutputArgs out;
  std::string data, fingerprint;
};

std::unique_ptr<Store> open_store(const QueryArgs& args) {
  auto store = Store::open_read_only(args.data.empty() ? default_data_dir() : args.data);
  if (!store) throw CliError(store.error().message);
  return std::move(store).value();
}

// The (graph, runtime) key: from --fingerprint GRAPH:RUNTIME, or computed from the graph, cluster
// and simulator flags exactly as `gantry tune` computed it.
std::pair<Fingerprint, Fingerprint> key_of(const QueryArgs& args) {
  std::pair<Fingerprint, Fingerprint> key;
  if (!args.fingerprint.empty()) {
    const auto colon = args.fingerprint.find(':');
    if (colon == std::string::npos || !Fingerprint::from_hex(args.fingerprint.substr(0, colon), key.first) ||
        !Fingerprint::from_hex(args.fingerprint.substr(colon + 1), key.second))
      throw CliError("--fingerprint '" + args.fingerprint + "': expected GRAPH:RUNTIME, two 32-digit hex fingerprints");
    return key;
  }
  Problem problem = load_problem(args.problem);
  return {gantry::fingerprint(problem.graph), runtime_fingerprint(problem.cluster, args.sim.options())};
}

std::string when(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buffer;
}

nlohmann::json record_json(const ScheduleRecord& r) {
  return {{"graph_fingerprint", r.graph.hex()}, {"runtime_fingerprint", r.cluster.hex()}, {"graph", r.graph_label},
          {"cluster", r.cluster_name}, {"sim", r.sim}, {"method", r.method}, {"makespan", r.makespan},
          {"lower_bound", r.lower_bound}, {"unit", r.unit}, {"job", r.job_id}, {"found_at", r.found_at},
          {"evaluations", r.evaluations}, {"placement", r.placement.device}};
}

ScheduleRecord require_best(Store& store, const std::pair<Fingerprint, Fingerprint>& key) {
  auto best = store.best(key.first, key.second);
  if (!best) throw CliError(best.error().message);
  if (!best.value())
    throw CliError("no stored placement for graph " + key.first.hex() + " on runtime " + key.second.hex() +
                   " in " + store.path() + " (run `gantry tune` first; `gantry query list` shows what is stored)");
  return *best.value();
}

void add_key_options(CLI::App& cmd, QueryArgs& args) {
  cmd.add_option("--data", args.data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  cmd.add_option("--fingerprint", args.fingerprint, "GRAPH:RUNTIME fingerprints instead of --graph/--cluster");
  args.problem.add_to(cmd);
  args.sim.add_to(cmd);
  args.out.add_to(cmd, false);
}

void run_best(const QueryArgs& args) {
  auto store = open_store(args);
  const ScheduleRecord r = require_best(*store, key_of(args));
  if (args.out.json()) {
    std::cout << record_json(r).dump(2) << "\n";
    return;
  }
  TextTable t({"field", "value"});
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"graph", r.graph_label + " (" + r.graph.hex() + ")"}, {"cluster", r.cluster_name + ", runtime " + r.sim},
           {"makespan", format_time(r.makespan, r.unit)}, {"lower bound", format_time(r.lower_bound, r.unit)},
           {"method", r.method}, {"found", when(r.found_at) + " by " + r.job_id},
           {"evaluations", std::to_string(r.evaluations)}})
    t.add({k, v});
  t.print(std::cout);
}

void run_list(const QueryArgs& args) {
  auto store = open_store(args);
  auto list = store->list_best(args.fingerprint);
  if (!list) throw CliError(list.error().message);
  if (args.out.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : list.value()) {
      nlohmann::json item = record_json(r);
      item.erase("placement");
      j.push_back(item);
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  TextTable t({"graph", "cluster", "runtime", "makespan", "x bound", "method", "found", "key"});
  for (const auto& r : list.value()) {
    char ratio[16];
    std::snprintf(ratio, sizeof ratio, "%.3f", r.lower_bound > 0 ? r.makespan / r.lower_bound : 0.0);
    t.add({r.graph_label, r.cluster_name, r.sim, format_time(r.makespan, r.unit), ratio, r.method, when(r.found_at),
           r.graph.hex().substr(0, 8) + ":" + r.cluster.hex().substr(0, 8)});
  }
  t.print(std::cout);
  std::cout << list.value().size() << " stored plan(s) in " << store->path() << "\n";
}

void run_history(const QueryArgs& args) {
  auto store = open_store(args);
  const auto key = key_of(args);
  const ScheduleRecord best = require_best(*store, key);
  auto history = store->history(key.first, key.second);
  if (!history) throw CliError(history.error().message);
  if (args.out.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& h : history.value())
      j.push_back({{"time", h.time}, {"makespan", h.makespan}, {"method", h.method}, {"job", h.job_id},
                   {"evaluations", h.evaluations}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  TextTable t({"when", "makespan", "method", "evaluations", "job"});
  for (const auto& h : history.value())
    t.add({when(h.time), format_time(h.makespan, best.unit), h.method, std::to_string(h.evaluations), h.job_id});
  t.print(std::cout);
}

void run_export(const QueryArgs& args) {
  auto store = open_store(args);
  const ScheduleRecord r = require_best(*store, key_of(args));
  std::cout << placement_to_json(r.placement, r.graph.hex(), r.cluster_name) << "\n";
}

}  // namespace

void add_query_command(CLI::App& app) {
  CLI::App* query = app.add_subcommand("query", "read the store: best plans, their history, exports");
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
    auto run = verb.run;
    cmd->callback([args, run] { run(*args); });
  }
}

}  // namespace gantry::cli
