// gantry jobs: the tuning jobs of the local store, read-only (works while a job runs). A RUNNING
// job whose process is gone shows as INTERRUPTED.
#include <algorithm>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct JobsArgs {
  std::string data;
  OutputArgs out;
};

void run_jobs(const JobsArgs& args) {
  const std::string dir = args.data.empty() ? default_data_dir() : args.data;
  auto store = Store::open_read_only(dir);
  if (!store) throw CliError(store.error().message);
  auto jobs = store.value()->jobs();
  if (!jobs) throw CliError(jobs.error().message);
  std::sort(jobs.value().begin(), jobs.value().end(),
            [](const JobRecord& a, const JobRecord& b) { return a.started < b.started; });
  if (args.out.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : jobs.value())
      j.push_back({{"id", r.id}, {"state", to_string(r.state)}, {"graph", r.graph_label}, {"cluster", r.cluster_name},
                   {"graph_fingerprint", r.graph.hex()}, {"runtime_fingerprint", r.cluster.hex()},
                   {"started", r.started}, {"finished", r.finished}, {"evaluations", r.evaluations},
                   {"best_makespan", r.best_makespan}, {"owner_pid", r.owner_pid}, {"owner_host", r.owner_host},
                   {"message", r.message}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  TextTable t({"job", "state", "graph", "cluster", "started", "seconds", "evaluations", "best", "owner", "message"});
  for (const auto& r : jobs.value())
    t.add({r.id, to_string(r.state), r.graph_label, r.cluster_name, format_unix_time(r.started),
           r.finished > 0 ? format_fixed(r.finished - r.started, 1) : "-", std::to_string(r.evaluations),
           r.best_makespan > 0 ? format_fixed(r.best_makespan, 6) : "-",
           r.owner_pid > 0 ? std::to_string(r.owner_pid) + "@" + r.owner_host : "-", r.message});
  t.print(std::cout);
  std::cout << jobs.value().size() << " job(s) in " << dir << "\n";
}

}  // namespace

void add_jobs_command(CLI::App& app) {
  auto args = std::make_shared<JobsArgs>();
  CLI::App* cmd = app.add_subcommand("jobs", "the tuning jobs of the local store (read-only: works while a job runs)");
  cmd->add_option("--data", args->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  args->out.add_to(*cmd, false);
  cmd->callback([args] { run_jobs(*args); });
}

}  // namespace gantry::cli
