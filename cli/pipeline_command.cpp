// gantry pipeline: simulate pipeline schemes (partition + placement + per-device F/B/W order) and
// compare the baseline schedules.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <memory>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/pipeline_args.hpp"
#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "core/json_util.hpp"
#include "sim/blocking_deadlock.hpp"
#include "sim/pipeline_simulation.hpp"
#include "sim/timeline_export.hpp"
#include "tuner/pipeline/schedule_registry.hpp"
#include "tuner/pipeline/stage_source.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/pipeline_stages.hpp"
#include "workloads/vidur_profile.hpp"

namespace gantry::cli {

namespace {

nlohmann::json result_json(const std::string& name, const PipelineResult& r) {
  if (r.out_of_memory || !r.completed)  // no timing result for a scheme that cannot run
    return {{"schedule", name}, {"completed", r.completed}, {"error", r.error}, {"out_of_memory", r.out_of_memory},
            {"peak_memory", r.peak_memory}, {"memory_limit", r.memory_limit}};
  return {{"schedule", name}, {"completed", r.completed}, {"error", r.error}, {"iteration_time", r.iteration_time},
          {"bubble_ratio", r.bubble_ratio}, {"device_bubble", r.device_bubble}, {"peak_memory", r.peak_memory},
          {"memory_limit", r.memory_limit}, {"out_of_memory", r.out_of_memory}, {"transfer_time", r.transfer_time},
          {"exposed_transfer_time", r.exposed_transfer_time}, {"overlap_ratio", r.overlap_ratio},
          {"tokens_per_second_per_gpu", r.tokens_per_second_per_gpu}, {"mfu", r.mfu}};
}

void print_table(const std::vector<std::pair<std::string, PipelineResult>>& results) {
  TextTable t({"schedule", "iteration", "bubble", "bubble per device", "peak memory (max)", "overlap", "tokens/s/GPU", "MFU",
               "status"});
  for (const auto& [name, r] : results) {
    if (!r.completed) {
      t.add({name, "-", "-", "-", "-", "-", "-", "-", "DEADLOCK"});
      continue;
    }
    std::string per_device;
    for (double b : r.device_bubble) per_device += (per_device.empty() ? "" : " ") + format_fixed(100 * b, 0) + "%";
    double peak = 0;
    for (double m : r.peak_memory) peak = std::max(peak, m);
    if (r.out_of_memory) {  // an out-of-memory scheme is not a result: only its memory is shown
      t.add({name, "-", "-", "-", format_bytes(peak), "-", "-", "-", "OUT OF MEMORY"});
      continue;
    }
    t.add({name, format_time(r.iteration_time, "s"), format_fixed(100 * r.bubble_ratio, 1) + "%", per_device,
           format_bytes(peak), format_fixed(100 * r.overlap_ratio, 1) + "%",
           r.tokens_per_second_per_gpu > 0 ? format_fixed(r.tokens_per_second_per_gpu, 0) : "-",
           r.mfu > 0 ? format_fixed(100 * r.mfu, 1) + "%" : "-", "ok"});
  }
  t.print(std::cout);
}

void run_one(const PipelineArgs& args, const std::vector<std::string>& names) {
  check_flags(args);
  std::unique_ptr<PipelineScheme> given;  // --scheme: simulated with the costs of its own partition and placement
  if (!args.scheme_file.empty()) {
    auto text = read_text_file(args.scheme_file);
    if (!text) throw CliError(text.error().message);
    auto scheme = scheme_from_json(text.value(), args.scheme_file);
    if (!scheme) throw CliError(scheme.error().message);
    given = std::make_unique<PipelineScheme>(std::move(scheme).value());
    if (args.microbatches_given && args.microbatches != given->num_microbatches)
      throw CliError("--microbatches " + std::to_string(args.microbatches) + ": the scheme " + args.scheme_file +
                     " has " + std::to_string(given->num_microbatches) + " microbatches");
  }
  const PipelineSource source = pipeline_source(args, given.get());
  std::vector<std::pair<std::string, PipelineResult>> results;
  std::vector<PipelineScheme> simulated;
  // Schedules these sizes do not allow (interleaved with microbatches not a multiple of the
  // devices, more stages than layers): when comparing several, the others still run.
  std::vector<std::pair<std::string, std::string>> unbuilt;
  for (const std::string& name : names) {
    auto built = given ? load_pipeline(*given, *source.stages, args.scheme_file)
                       : build_pipeline(name, *source.stages, source.microbatches, source.microbatches_input);
    if (!built && !given && names.size() > 1) {
      unbuilt.emplace_back(name, built.error().message);
      continue;
    }
    if (!built) throw CliError(built.error().message);
    PipelineRun run = std::move(built).value();
    const std::string label = given ? args.scheme_file : name;
    if (!args.save_scheme.empty()) {
      auto written = write_text_file(args.save_scheme, scheme_to_json(run.scheme));
      if (!written) throw CliError(written.error().message);
    }
    auto r = simulate_pipeline(run.scheme, run.costs, pipeline_run_info(source, args.out.wants_timeline()));
    if (!r) throw CliError(r.error().message);
    write_pipeline_timeline(args.out, "pipeline " + label + ": " + source.description + ", " +
                                          std::to_string(run.scheme.num_microbatches) + " microbatches",
                            r.value());
    results.emplace_back(label, std::move(r).value());
    simulated.push_back(std::move(run.scheme));
  }
  if (results.empty()) throw CliError("no schedule can be built for these sizes: " + unbuilt.front().second);
  if (args.out.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [name, r] : results) j.push_back(result_json(name, r));
    for (const auto& [name, why] : unbuilt) j.push_back({{"schedule", name}, {"completed", false}, {"error", why}});
    std::cout << (j.size() == 1 ? j[0] : j).dump(2) << "\n";
    return;
  }
  std::cout << source.description << ", " << source.microbatches << " microbatches\n\n";
  print_table(results);
  for (const auto& [name, why] : unbuilt) std::cout << name << ": not built: " << why << "\n";
  // The same orders run with blocking point-to-point calls, one at a time and batched per step.
  std::cout << "\nwith blocking send/recv (one at a time; batched per step as executors post them):";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const BlockingCheck one = check_blocking_order(simulated[i]), batched = check_blocking_order(simulated[i], true);
    std::cout << "\n  " << results[i].first << ": " << (one.progresses ? "progresses" : "DEADLOCK, " + one.cycle) << "; batched: "
              << (batched.progresses ? "progresses" : "DEADLOCK, " + batched.cycle);
  }
  std::cout << "\n";
}

}  // namespace

void add_pipeline_command(CLI::App& app) {
  CLI::App* pipeline = app.add_subcommand("pipeline", "simulate and compare pipeline-parallel schemes");
  pipeline->require_subcommand(1);
  const ScheduleRegistry& registry = schedule_registry();
  auto sim_args = std::make_shared<PipelineArgs>();
  CLI::App* sim = pipeline->add_subcommand("simulate", "simulate one schedule: iteration time, bubbles, memory, overlap");
  add_pipeline_options(*sim, *sim_args);
  sim->add_option("--schedule", sim_args->schedule, "one of:\n" + registry.help())->capture_default_str();
  sim->add_option("--scheme", sim_args->scheme_file,
                  "simulate this scheme JSON instead, with the costs of its own partition and placement "
                  "(see docs/formats.md)")
      ->check(file_path());
  sim->add_option("--save-scheme", sim_args->save_scheme, "write the simulated scheme as JSON")->check(file_path());
  sim_args->out.add_to(*sim);
  sim->callback([sim, sim_args] {
    note_given(*sim, *sim_args);
    run_one(*sim_args, {sim_args->schedule});
  });
  auto cmp_args = std::make_shared<PipelineArgs>();
  CLI::App* cmp = pipeline->add_subcommand("compare", "every baseline schedule side by side");
  add_pipeline_options(*cmp, *cmp_args);
  cmp->add_option("--schedules", cmp_args->schedules, "schedules to compare (a comma list) from:\n" + registry.help())
      ->delimiter(',')
      ->capture_default_str();
  cmp_args->out.add_to(*cmp, false);
  cmp->callback([cmp, cmp_args] {
    note_given(*cmp, *cmp_args);
    run_one(*cmp_args, cmp_args->schedules);
  });
  add_pipeline_tune_command(*pipeline);
}

}  // namespace gantry::cli
