// gantry submit: sends a job file to a coordinator. Prints the job id (or, with --wait, follows
// the job to its end and exits with its status).
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/job_args.hpp"

namespace gantry::cli {

namespace {

struct SubmitArgs {
  std::string file;
  RemoteArgs remote;
  bool wait = false;
  OutputArgs out;
};

}  // namespace

void add_submit_command(CLI::App& app) {
  auto args = std::make_shared<SubmitArgs>();
  CLI::App* cmd = app.add_subcommand("submit", "send a job file to a coordinator (see configs/jobs/)");
  cmd->add_option("job", args->file,
                  "job file (YAML; keys are `gantry tune`'s flag names, or with kind: pipeline `gantry pipeline tune`'s)")
      ->required();
  args->remote.add_to(*cmd);
  cmd->add_flag("--wait", args->wait, "follow the job to its end; exit 0 COMPLETE, 130 CANCELLED, 1 FAILED");
  args->out.add_to(*cmd, false);
  cmd->callback([args] {
    const JobFile file = read_job_file_settings(args->file);
    if (file.kind == "pipeline")  // its keys are `gantry pipeline tune`'s flags
      return submit_job_spec(pipeline_job_from_file(file), args->remote, args->wait, args->out.json());
    TuneArgs job;
    read_job_file(args->file, job);
    job.out = args->out;
    submit_job(job, args->remote, args->wait);
  });
}

}  // namespace gantry::cli
