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
  auto remote = std::make_shared<RemoteArgs>();
  CLI::App* cmd = app.add_subcommand("cancel", "stop a coordinator's job (it keeps its best)");
  cmd->add_option("job", *job, "the job id (gantry jobs --coordinator ...)")->required();
  remote->add_to(*cmd);
  cmd->callback([job, remote] {
    wire::Request request;
    request.job = *job;
    auto reply = call_coordinator(remote->client(), wire::Type::cancel, request);
    if (!reply) throw CliError(reply.error().message);
    std::cout << nlohmann::json::parse(reply.value().data, nullptr, false).value("message", "cancelled") << "\n";
  });
}

}  // namespace gantry::cli
