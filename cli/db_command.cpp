// gantry db: maintenance of the store.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct DbArgs {
  std::string data, target;
  OutputArgs out;
  std::string dir() const { return data.empty() ? default_data_dir() : data; }
};

void run_backup(const DbArgs& args) {
  if (!std::filesystem::exists(args.dir() + "/CURRENT"))  // opening would create an empty database
    throw CliError("no gantry database at " + args.dir() + " (nothing to back up)");
  auto store = Store::open(args.dir());
  if (!store) throw CliError(store.error().message);
  auto s = store.value()->backup(args.target);
  if (!s) throw CliError(s.error().message);
  std::cout << "backup of " << args.dir() << " written to " << args.target << " (open it with --data " << args.target << ")\n";
}

void run_verify(const DbArgs& args) {
  auto store = Store::open_read_only(args.dir());
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

}  // namespace

void add_db_command(CLI::App& app) {
  CLI::App* db = app.add_subcommand("db", "maintain the store: backup, verify, stats");
  db->require_subcommand(1);
  auto backup = std::make_shared<DbArgs>();
  CLI::App* b = db->add_subcommand("backup", "write a consistent copy (RocksDB checkpoint) to DIR");
  b->add_option("DIR", backup->target, "where the copy goes (must not exist)")->required();
  b->add_option("--data", backup->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  b->callback([backup] { run_backup(*backup); });
  auto verify = std::make_shared<DbArgs>();
  CLI::App* v = db->add_subcommand("verify", "check every file's checksums and decode every record");
  v->add_option("--data", verify->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  verify->out.add_to(*v, false);
  v->callback([verify] { run_verify(*verify); });
  auto stats = std::make_shared<DbArgs>();
  CLI::App* s = db->add_subcommand("stats", "records and bytes per column family");
  s->add_option("--data", stats->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  stats->out.add_to(*s, false);
  s->callback([stats] { run_stats(*stats); });
}

}  // namespace gantry::cli
