#pragma once
// Runs gantry in-process for the CLI tests, two ways:
// - run_cli: the whole command line (gantry_main), as a user meets it: exit code, stdout, stderr;
// - run_verbs: the verbs parsed on a bare app, for tests that check a failure's own exception
//   (CliError, CLI::ParseError) or a verb's CliExit code.
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"

namespace gantry::testing {

struct CliRun {
  int code = 0;
  std::string out, err;
};

inline CliRun run_cli(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"gantry"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  CliRun run;
  run.code = cli::gantry_main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// Returns stdout. Without `exit_code`, a verb's CliExit is thrown as std::runtime_error
// "exit CODE: message"; with it, the code is stored there (0 when the verb returned normally).
inline std::string run_verbs(const std::vector<std::string>& args, int* exit_code = nullptr) {
  CLI::App app{"gantry"};
  app.require_subcommand(1);
  cli::add_all_commands(app);
  std::vector<const char*> argv = {"gantry"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream captured;
  auto* old = std::cout.rdbuf(captured.rdbuf());
  if (exit_code) *exit_code = 0;
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cli::CliExit& e) {
    std::cout.rdbuf(old);
    if (!exit_code) throw std::runtime_error("exit " + std::to_string(e.code) + ": " + e.message);
    *exit_code = e.code;
    return captured.str();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return captured.str();
}

}  // namespace gantry::testing
