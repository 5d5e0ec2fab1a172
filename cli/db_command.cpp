// gantry db: maintenance of the store.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "actors/resimulate.hpp"
#include "cli/text_table.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct DbArgs {
  std::string data, target;
  OutputArgs out;
  std::string dir() const { return data.empty() ? default_data_dir() : data; }
};

// Through a read-only instance: no writer's lock needed, so it works while a job writes.
void run_backup(const DbArgs& args) {
  auto store = Store::open_read_only(args.dir());
  if (!store) throw CliError(store.error().message);
  auto s = store.value()->backup(args.target);
  if (!s) throw CliError(s.error().message);
  std::cout << "backup of " << args.dir() << " written to " << args.target << " (open it with --data " << args.target << ")\n";
}

void run_verify(const DbArgs& args) {
  auto store = Store::open_read_only(args.dir(), /*allow_damaged=*/true);
  if (!store) throw CliError(store.error().message);
  auto report = store.value()->verify();
  if (!report) throw CliError(report.error().message);
  if (args.out.json()) {
    std::cout << nlohmann::json{{"records", report.value().records}, {"problems", report.value().problems}}.dump(2) << "\n";
  } else {
    std::cout << report.value().records << " records checked in " << args.dir() << "\n";
    for (const auto& p : report.value().problems) std::cout << "problem: " << p << "\n";
    if (report.value().problems.empty()) std::cout << "no problems found\n";
  }
  if (!report.value().problems.empty()) throw CliError(std::to_string(report.value().problems.size()) + " problem(s) found");
}

void run_stats(const DbArgs& args) {
  auto store = Store::open_read_only(args.dir());
  if (!store) throw CliError(store.error().message);
  auto stats = store.value()->stats();
  if (!stats) throw CliError(stats.error().message);
  if (args.out.json()) {
    nlohmann::json j = {{"path", stats.value().path}, {"schema_version", stats.value().schema_version}};
    for (const auto& f : stats.value().families) j["families"][f.name] = {{"keys", f.keys}, {"bytes", f.bytes}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << stats.value().path << " (schema " << stats.value().schema_version << ")\n";
  TextTable t({"column family", "keys (est.)", "size"});
  for (const auto& f : stats.value().families) t.add({f.name, std::to_string(f.keys), format_bytes(static_cast<double>(f.bytes))});
  t.print(std::cout);
}

void run_resimulate(const DbArgs& args) {
  if (::access(args.dir().c_str(), F_OK) == 0 && ::access(args.dir().c_str(), R_OK | W_OK | X_OK) != 0)
    throw CliError("cannot open database " + args.dir() + ": permission denied");
  if (!std::filesystem::exists(args.dir() + "/CURRENT"))
    throw CliError("no gantry database at " + args.dir() + " (nothing to re-simulate)");
  auto store = Store::open(args.dir());
  if (!store) throw CliError(store.error().message);
  auto report = resimulate_stale(*store.value());
  if (!report) throw CliError(report.error().message);
  const ResimulateReport& r = report.value();
  if (args.out.json()) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& i : r.items)
      items.push_back({{"graph", i.graph_label}, {"cluster", i.cluster_name}, {"graph_fingerprint", i.graph.hex()},
                       {"old_runtime_fingerprint", i.old_runtime.hex()}, {"runtime_fingerprint", i.new_runtime.hex()},
                       {"old_model_version", i.old_version}, {"old_makespan", i.old_makespan},
                       {"makespan", i.new_makespan}, {"stored", i.stored}});
    std::cout << nlohmann::json{{"stale", r.stale}, {"current", r.current}, {"resimulated", r.resimulated}, {"stored", r.stored},
                                {"items", items}, {"problems", r.problems}}.dump(2) << "\n";
  } else {
    if (!r.items.empty()) {
      TextTable t({"graph", "cluster", "old version", "old makespan", "new makespan", "key", "stored"});
      for (const auto& i : r.items)
        t.add({i.graph_label, i.cluster_name, std::to_string(i.old_version), format_fixed(i.old_makespan, 6),
               format_fixed(i.new_makespan, 6), i.graph.hex().substr(0, 8) + ":" + i.new_runtime.hex().substr(0, 8),
               i.stored ? "yes" : "no (a better current best exists)"});
      t.print(std::cout);
    }
    for (const auto& p : r.problems) std::cout << "problem: " << p << "\n";
    std::cout << r.stale << " stale best(s) in " << args.dir() << ", " << r.current << " already current, "
              << r.resimulated << " re-simulated, " << r.stored << " stored as current bests\n";
  }
  if (!r.problems.empty())
    throw CliError(std::to_string(r.problems.size()) + " stale best(s) could not be re-simulated");
}

}  // namespace

void add_db_command(CLI::App& app) {
  CLI::App* db = app.add_subcommand("db", "maintain the store: backup, verify, stats, resimulate");
  db->require_subcommand(1);
  auto backup = std::make_shared<DbArgs>();
  CLI::App* b = db->add_subcommand("backup",
                                   "write a consistent copy to DIR (read-only: works while a job writes the store)");
  b->add_option("DIR", backup->target, "where the copy goes (must not exist)")->required();
  b->add_option("--data", backup->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  b->callback([backup] { run_backup(*backup); });
  auto verify = std::make_shared<DbArgs>();
  CLI::App* v = db->add_subcommand("verify",
                                   "check every table file the MANIFEST lists (present and whole), every block's "
                                   "checksum, and decode every record");
  v->add_option("--data", verify->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  verify->out.add_to(*v, false);
  v->callback([verify] { run_verify(*verify); });
  auto stats = std::make_shared<DbArgs>();
  CLI::App* s = db->add_subcommand("stats", "records and bytes per column family");
  s->add_option("--data", stats->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  stats->out.add_to(*s, false);
  s->callback([stats] { run_stats(*stats); });
  auto resim = std::make_shared<DbArgs>();
  CLI::App* r = db->add_subcommand("resimulate",
                                   "recompute every stale best (older simulator model) under the current one and store it");
  r->add_option("--data", resim->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  resim->out.add_to(*r, false);
  r->callback([resim] { run_resimulate(*resim); });
}

}  // namespace gantry::cli
