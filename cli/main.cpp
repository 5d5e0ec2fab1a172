// gantry: autotuning of ML execution plans. One file per verb; this file only wires them up.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gantry: finds fast execution plans for ML dataflow graphs and pipelines.\n"
               "Places ops on devices (heuristics, search), simulates asynchronous work-conserving runtimes,\n"
               "and writes timelines. Run `gantry VERB --help` for each verb."};
  app.require_subcommand(1);
  app.fallthrough();
  // A reader that stops early (`gantry query list | head -1`) makes writes fail with EPIPE instead
  // of killing the process, so every verb still cleans up (a read-only open's temporary directory).
  std::signal(SIGPIPE, SIG_IGN);
  app.footer("Exit status: 0 success, 1 error (or a tuning job that FAILED), 130 a cancelled tuning job.");
  gantry::cli::add_place_command(app);
  gantry::cli::add_simulate_command(app);
  gantry::cli::add_tune_command(app);
  gantry::cli::add_query_command(app);
  gantry::cli::add_db_command(app);
  gantry::cli::add_jobs_command(app);
  gantry::cli::add_pipeline_command(app);
  gantry::cli::add_models_command(app);
  gantry::cli::add_workloads_command(app);
  gantry::cli::add_clusters_command(app);
  gantry::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const gantry::cli::CliExit& e) {
    std::cout.flush();
    if (!e.message.empty()) std::cerr << "gantry: " << e.message << "\n";
    return e.code;
  } catch (const std::exception& e) {  // CliError and any failure below it: a message, never an abort
    std::cout.flush();
    std::cerr << "gantry: " << e.what() << "\n";
    return 1;
  }
  std::cout.flush();
  if (std::cout && std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
  const int error = errno;
  struct stat out {};
  if (error == EPIPE || (fstat(STDOUT_FILENO, &out) == 0 && S_ISFIFO(out.st_mode)))
    return 128 + SIGPIPE;  // the reader left early: the status the shell would report, without dying of it
  std::cerr << "gantry: cannot write the output: " << std::strerror(error) << "\n";
  return 1;
}
