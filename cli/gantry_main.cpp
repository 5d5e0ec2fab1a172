// The whole command line: every verb on one app, parser errors and failures as "gantry: ..." on
// stderr with an exit code. main() only calls it; tests call it in-process.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"

namespace gantry::cli {

int gantry_main(int argc, const char* const* argv) {
  CLI::App app{"gantry: finds fast execution plans for ML dataflow graphs and pipelines.\n"
               "Places ops on devices (heuristics, search), simulates asynchronous work-conserving runtimes,\n"
               "and writes timelines. Run `gantry VERB --help` for each verb."};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", std::string("gantry ") + GANTRY_VERSION);
  // Parser errors carry the program's name like every other error.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    return "gantry: " + CLI::FailureMessage::simple(failed, e);
  });
  add_place_command(app);
  add_simulate_command(app);
  add_tune_command(app);
  add_query_command(app);
  add_db_command(app);
  add_pipeline_command(app);
  add_models_command(app);
  add_workloads_command(app);
  add_clusters_command(app);
  add_bench_command(app);
  if (argc > 1 && argv[1][0] != '-') {  // CLI11 would only say "A subcommand is required"
    const std::string verb = argv[1];
    bool known = false;
    std::string verbs;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      known = known || sub->get_name() == verb;
      verbs += (verbs.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "gantry: unknown verb '" << verb << "' (verbs: " << verbs << ")\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {  // CliError and any failure below it: a message, never an abort
    std::cerr << "gantry: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace gantry::cli
