#pragma once
#include <CLI/CLI.hpp>

namespace gantry::cli {

// Each verb registers itself on the top-level app (one file per verb).
void add_place_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_execute_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_workloads_command(CLI::App& app);
void add_clusters_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_query_command(CLI::App& app);
void add_db_command(CLI::App& app);
void add_jobs_command(CLI::App& app);
void add_pipeline_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_coordinator_command(CLI::App& app);
void add_worker_command(CLI::App& app);
void add_submit_command(CLI::App& app);
void add_status_command(CLI::App& app);
void add_cancel_command(CLI::App& app);
void add_keys_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_train_command(CLI::App& app);

// Every verb above, in the order `gantry --help` lists them.
void add_all_commands(CLI::App& app);
// Runs the command line: the exit code, errors printed as "gantry: ..." on stderr.
int gantry_main(int argc, const char* const* argv);

}  // namespace gantry::cli
