// gantry jobs: the jobs (tuning, learner, pipeline) of the local store, read-only (works while a job runs), or of a
// coordinator (--coordinator). A RUNNING job whose process is gone shows as INTERRUPTED.
#include <iostream>

#include "actors/net/client.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/job_args.hpp"
#include "cli/job_listing.hpp"
#include "storage/store.hpp"

namespace gantry::cli {

namespace {

struct JobsArgs {
  std::string data, job;
  bool background = false;
  RemoteArgs remote;
  OutputArgs out;
};

void run_jobs(const JobsArgs& args) {
  if (!args.remote.endpoint.empty()) {
    const ClientOptions client = args.remote.client();
    const std::string& endpoint = client.endpoint;
    wire::Request request;
    request.job = args.job;
    auto reply = call_coordinator(client, wire::Type::jobs, request);
    if (!reply) throw CliError(reply.error().message);
    auto jobs = wire::job_records_from_json(reply.value().data);
    if (!jobs) throw CliError("the coordinator at " + endpoint + " sent " + jobs.error().message);
    print_jobs(std::cout, jobs.value(), args.out.json(), "at " + endpoint, args.background || !args.job.empty());
    return;
  }
  const std::string dir = args.data.empty() ? default_data_dir() : args.data;
  auto store = Store::open_read_only(dir);
  if (!store) throw CliError(store.error().message);
  auto jobs = store.value()->jobs();
  if (!jobs) throw CliError(jobs.error().message);
  std::vector<JobRecord> list;
  for (const JobRecord& j : jobs.value())
    if (args.job.empty() || j.id == args.job) list.push_back(j);
  if (!args.job.empty() && list.empty()) throw CliError("no job " + args.job + " in " + dir);
  print_jobs(std::cout, list, args.out.json(), "in " + dir, args.background || !args.job.empty());
}

}  // namespace

void add_jobs_command(CLI::App& app) {
  auto args = std::make_shared<JobsArgs>();
  CLI::App* cmd = app.add_subcommand("jobs", "jobs (tune, train, pipeline tune, measure): of the local store (read-only: works while a job runs) or of a coordinator");
  cmd->add_option("job", args->job, "only this job");
  cmd->add_option("--data", args->data, "data directory (default: $GANTRY_DATA or ./gantry-data)");
  cmd->add_flag("--background", args->background,
                "also the background improvement runs that ended (gantry coordinator --improve; left out by default, "
                "in -f json too)");
  args->remote.add_to(*cmd, "ask this coordinator (tcp://HOST:PORT) instead of the local store");
  args->out.add_to(*cmd, false);
  cmd->callback([args] { run_jobs(*args); });
}

}  // namespace gantry::cli
