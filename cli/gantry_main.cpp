// The whole command line: every verb on one app, parser errors and failures as "gantry: ..." on
// stderr with an exit code. main() only calls it; tests call it in-process.
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
#include "learner/learned_placement.hpp"

namespace gantry::cli {

void add_all_commands(CLI::App& app) {
  add_place_command(app);
  add_simulate_command(app);
  add_execute_command(app);
  add_profile_command(app);
  add_tune_command(app);
  add_train_command(app);
  add_query_command(app);
  add_db_command(app);
  add_jobs_command(app);
  add_coordinator_command(app);
  add_worker_command(app);
  add_submit_command(app);
  add_status_command(app);
  add_cancel_command(app);
  add_keys_command(app);
  add_export_command(app);
  add_pipeline_command(app);
  add_models_command(app);
  add_workloads_command(app);
  add_clusters_command(app);
  add_bench_command(app);
}

namespace {

// What is wrong with the verbs that begin the command line (`gantry pipeline simluate`), or "":
// where a verb needs one of its own, CLI11 would only say "A subcommand is required".
std::string unknown_verb(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* at = &app;
  std::string path = "gantry";
  const auto verbs_of = [](CLI::App* parent) {
    std::string verbs;
    for (CLI::App* sub : parent->get_subcommands([](const CLI::App*) { return true; }))
      verbs += (verbs.empty() ? "" : ", ") + sub->get_name();
    return verbs;
  };
  int i = 1;
  for (; i < argc && argv[i][0] != '-' && at->get_require_subcommand_min() > 0; ++i) {
    const std::string verb = argv[i];
    CLI::App* next = nullptr;
    for (CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == verb) next = sub;
    if (!next)
      return (at == &app ? "unknown verb '" + verb + "' (verbs: " : "unknown verb '" + verb + "' of `" + path + "` (its verbs: ") +
             verbs_of(at) + ")";
    path += " " + verb;
    at = next;
  }
  if (i == argc && at != &app && at->get_require_subcommand_min() > 0)
    return "`" + path + "` needs a verb: " + verbs_of(at) + " (`" + path + " --help` says what each does)";
  return "";
}

}  // namespace

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
  app.footer("Exit status: 0 success, 1 error (or a tuning job that FAILED), 2 unknown verb, 130 a cancelled tuning job, 141 the reader of the output left early.");
  register_learned_methods();  // `doppler` among the placement methods
  add_all_commands(app);
  if (const std::string unknown = unknown_verb(app, argc, argv); !unknown.empty()) {
    std::cerr << "gantry: " << unknown << "\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version, or the error
    return code == 0 ? 0 : 1;
  } catch (const CliExit& e) {
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

}  // namespace gantry::cli
