// gantry status: a coordinator's workers, slots, leases in flight, queues and dropped messages.
#include <iostream>
#include <nlohmann/json.hpp>

#include "actors/net/client.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/job_args.hpp"
#include "cli/text_table.hpp"

namespace gantry::cli {

namespace {

struct StatusArgs {
  RemoteArgs remote;
  OutputArgs out;
};

void run_status(const StatusArgs& args) {
  const ClientOptions client = args.remote.client();
  const std::string& endpoint = client.endpoint;
  auto reply = call_coordinator(client, wire::Type::status, {});
  if (!reply) throw CliError(reply.error().message);
  auto j = nlohmann::json::parse(reply.value().data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw CliError("the coordinator at " + endpoint + " sent an unreadable status");
  if (args.out.json()) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  // Coordinators before background improvement send neither field.
  const auto background_line = [](const nlohmann::json& status) -> std::string {
    const double seconds = status.value("improve_seconds", 0.0);
    if (!(seconds > 0)) return "";
    const std::string run = status.value("background_run", "");
    return "background improvement: on, " + format_fixed(seconds, 0) + " s runs when idle; " +
           (run.empty() ? "none running" : "job " + run + " running") + "\n";
  };
  TextTable workers({"worker", "host", "pid", "slots", "executors", "busy", "tasks done", "rollout time", "last heard"});
  for (const auto& w : j.value("workers", nlohmann::json::array())) {
    const std::string executors = w.value("executors", "");
    workers.add({w.value("name", ""), w.value("host", ""), std::to_string(w.value("pid", 0L)), std::to_string(w.value("slots", 0)),
                 executors.empty() ? "-" : executors, std::to_string(w.value("busy", 0)), std::to_string(w.value("done", 0L)),
                 format_fixed(w.value("busy_seconds", 0.0), 1) + " s", format_fixed(w.value("silent_seconds", 0.0), 1) + " s ago"});
  }
  workers.print(std::cout);
  for (const auto& w : j.value("workers", nlohmann::json::array()))  // (coordinators before distrust send no field)
    if (const std::string why = w.value("distrusted", ""); !why.empty())
      std::cout << "worker " << w.value("name", "") << " takes no tasks until it restarts: " << why << "\n";
  std::cout << j["workers"].size() << " worker(s), " << j.value("slots", 0) << " slots, " << j.value("leases", 0L)
            << " tasks leased, " << j.value("queued_tasks", 0L) << " queued\n"
            << "jobs: " << j["jobs_running"].size() << " running, " << j.value("queue_length", 0L) << " queued\n"
            << background_line(j)
            << "results: " << j.value("committed", 0L) << " committed, " << j.value("requeued", 0L) << " re-queued, "
            << j.value("stale_results", 0L) << " stale (dropped)\n"
            << "dropped: " << j.value("malformed", 0L) << " malformed messages, " << j.value("refused", 0L)
            << " connections without an authorized key, " << j.value("dropped_sends", 0L)
            << " sends to peers too slow to take them\n";
}

}  // namespace

void add_status_command(CLI::App& app) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* cmd = app.add_subcommand("status", "a coordinator's workers, slots, leases in flight and queues");
  args->remote.add_to(*cmd);
  args->out.add_to(*cmd, false);
  cmd->callback([args] { run_status(*args); });
}

}  // namespace gantry::cli
