// gantry: autotuning of ML execution plans. One file per verb; this file only wires them up.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gantry: finds fast execution plans for ML dataflow graphs and pipelines.\n"
               "Places ops on devices (heuristics, search), simulates asynchronous work-conserving runtimes,\n"
               "and writes timelines. Run `gantry VERB --help` for each verb."};
  app.require_subcommand(1);
  app.fallthrough();
  gantry::cli::add_place_command(app);
  gantry::cli::add_simulate_command(app);
  gantry::cli::add_tune_command(app);
  gantry::cli::add_query_command(app);
  gantry::cli::add_db_command(app);
  gantry::cli::add_pipeline_command(app);
  gantry::cli::add_models_command(app);
  gantry::cli::add_workloads_command(app);
  gantry::cli::add_clusters_command(app);
  gantry::cli::add_bench_command(app);
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
