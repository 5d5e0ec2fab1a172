// gantry cancel: stops a coordinator's job; a running one ends CANCELLED with its best kept.
#include <iostream>
#include <nlohmann/json.hpp>

#include "actors/net/client.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/job_args.hpp"

namespace gantry::cli {

void add_cancel_command(CLI::App& app) {
  auto job = std::make_shared<std::string>();
  auto coordinator = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("cancel", "stop a coordinator's job (it keeps its best)");
  cmd->add_option("job", *job, "the job id (gantry jobs --coordinator ...)")->required();
  add_coordinator_option(*cmd, *coordinator);
  cmd->callback([job, coordinator] {
    wire::Request request;
    request.job = *job;
    auto reply = call_coordinator(coordinator_endpoint(*coordinator), wire::Type::cancel, request);
    if (!reply) throw CliError(reply.error().message);
    std::cout << nlohmann::json::parse(reply.value().data, nullptr, false).value("message", "cancelled") << "\n";
  });
}

}  // namespace gantry::cli
