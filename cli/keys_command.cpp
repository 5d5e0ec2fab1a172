// gantry keys generate: CURVE key pairs for the cluster (a coordinator's, a worker's, a client's).
#include <iostream>

#include "actors/net/curve_keys.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"

namespace gantry::cli {

void add_keys_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("keys", "CURVE keys that authenticate and encrypt the cluster's traffic");
  cmd->require_subcommand(1);
  auto name = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>(".");
  CLI::App* generate = cmd->add_subcommand("generate", "make a key pair: NAME.key (secret, mode 600) and NAME.pub");
  generate->add_option("name", *name, "whose key (e.g. coordinator, worker-3, alice)")->required();
  generate->add_option("--dir", *dir, "where to write the files")->capture_default_str();
  generate->footer("The coordinator runs with --curve-key coordinator.key --authorized-keys FILE, FILE listing the\n"
                   "public keys (the .pub files' keys, one per line) of every worker and client allowed in.\n"
                   "Workers and clients give --curve-key THEIR.key --coordinator-key coordinator.pub.");
  generate->callback([name, dir] {
    auto keys = generate_curve_key_pair();
    if (!keys) throw CliError(keys.error().message);
    auto written = write_curve_key_files(*dir, *name, keys.value());
    if (!written) throw CliError(written.error().message);
    std::cout << "wrote " << *dir << "/" << *name << ".key (secret) and " << *dir << "/" << *name << ".pub\n"
              << keys.value().public_key << "\n";
  });
}

}  // namespace gantry::cli
