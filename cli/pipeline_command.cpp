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

struct PipelineArgs {
  std::string stages_file, schedule = "1f1b", mem_limit;
  std::string model, hf_config, cluster = "8xH100-nvswitch", partition = "compute", profile;
  std::string efficiency, scheme_file, save_scheme;
  int microbatches = 0, pp = 0;
  bool microbatches_given = false, pp_given = false;
  std::int64_t microbatch_size = 1, seq = 4096;
  std::vector<std::string> schedules = {"gpipe", "1f1b", "interleaved:2", "zb", "zbv"};
  OutputArgs out;
  std::string links = "contention";
};

// The stage costs with what the output says about them.
struct Source {
  std::unique_ptr<StageSource> stages;
  int microbatches = 0;
  std::string microbatches_input;  // the flag or file field the count came from, for errors
  double tokens_per_microbatch = 0, peak_flops = 0;
  std::string description;
};

// "80GiB", "512MiB", "8e10": a memory size > 0.
double parse_bytes(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  const std::string unit = end;
  if (unit == "GiB") value *= 1024.0 * 1024 * 1024;
  else if (unit == "MiB") value *= 1024.0 * 1024;
  else if (unit == "GB") value *= 1e9;
  else if (!unit.empty() || end == text.c_str()) throw CliError("--mem-limit '" + text + "': expected a number of bytes or e.g. 80GiB");
  if (!(value > 0) || !std::isfinite(value))
    throw CliError("--mem-limit '" + text + "': the memory limit must be a finite size > 0 (leave it out for the default)");
  return value;
}

// "--efficiency attention=0.5,mlp=0.65": achieved fraction of peak FLOP/s per layer type.
void apply_efficiency(const std::string& text, PipelineModelOptions& options) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    double value = eq == std::string::npos ? -1 : std::atof(item.c_str() + eq + 1);
    int index = -1;
    for (int t = 0; t <= static_cast<int>(LayerType::logits); ++t)
      if (key == to_string(static_cast<LayerType>(t))) index = t;
    if (index < 0 || !(value > 0 && value <= 1))
      throw CliError("--efficiency '" + item + "': expected TYPE=FRACTION with TYPE one of embedding, attention, mamba1, "
                     "mamba2, mlp, moe, logits and 0 < FRACTION <= 1");
    options.efficiency[index] = value;
  }
}

Source model_source(const PipelineArgs& args, const PipelineScheme* scheme) {
  ModelShape shape;
  shape.seq = args.seq;
  shape.microbatch = args.microbatch_size;
  Result<std::vector<LayerCost>> layers = make_error("");
  std::string label = args.model;
  if (!args.hf_config.empty()) {
    auto text = read_text_file(args.hf_config);
    if (!text) throw CliError(text.error().message);
    layers = model_layers_from_hf_config(text.value(), args.hf_config, shape);
    label = args.hf_config;
  } else {
    layers = model_layers(args.model, shape);
  }
  if (!layers) throw CliError(layers.error().message);
  auto cluster = Cluster::load(args.cluster);
  if (!cluster) throw CliError(cluster.error().message);
  const int p = args.pp_given ? args.pp : scheme ? scheme->num_devices() : cluster.value().size();
  if (p > cluster.value().size())
    throw CliError((args.pp_given ? "--pp " : args.scheme_file + ": the scheme runs on ") + std::to_string(p) +
                   (args.pp_given ? "" : " devices") + ": cluster " + cluster.value().name() + " has only " +
                   std::to_string(cluster.value().size()) + " devices");
  PipelineModelOptions model_options;
  apply_efficiency(args.efficiency, model_options);
  if (!args.profile.empty()) {  // measured operator times replace the FLOP-based ones
    const std::int64_t tokens = args.seq * args.microbatch_size;
    auto profile = read_vidur_profile(args.profile, tokens);
    if (!profile) throw CliError(profile.error().message);
    auto times = measured_layer_times(layers.value(), profile.value(), tokens, cluster.value().device(0));
    if (!times) throw CliError(args.profile + ": " + times.error().message);
    model_options.measured = std::move(times).value();
  }
  const auto method = parse_partition_method(args.partition);
  if (!method) throw CliError(method.error().message);
  Source source;
  source.microbatches = args.microbatches_given ? args.microbatches : scheme ? scheme->num_microbatches : 2 * p;
  source.microbatches_input = args.microbatches_given ? "--microbatches" : "the default microbatch count (2 x pp)";
  source.tokens_per_microbatch = static_cast<double>(args.seq * args.microbatch_size);
  source.peak_flops = cluster.value().device(0).peak_flops;
  source.description = label + " (" + std::to_string(layers.value().size()) + " layers) on " + cluster.value().name() +
                       ", pp " + std::to_string(p) + ", " +
                       (scheme ? "partition from " + args.scheme_file : args.partition + " partition");
  LayerModel model;
  model.params = layer_params(layers.value());
  model.time = layer_times(layers.value(), cluster.value().device(0), model_options);
  model.stage_costs = stage_cost_function(std::move(layers).value(), std::move(cluster).value(), model_options);
  source.stages = model_stage_source(std::move(model), p, method.value(),
                                     args.mem_limit.empty() ? 0 : parse_bytes(args.mem_limit));
  return source;
}

Source file_source(const PipelineArgs& args, const PipelineScheme* scheme) {
  if (args.pp_given)
    throw CliError("--pp conflicts with --stages: the stage file fixes the pipeline degree (n_stages)");
  auto text = read_text_file(args.stages_file);
  if (!text) throw CliError(text.error().message);
  auto parsed = read_stage_costs_json(text.value(), args.stages_file);
  if (!parsed) throw CliError(parsed.error().message);
  auto [costs, micro] = parsed.value();
  Source source;
  source.microbatches = args.microbatches_given ? args.microbatches : scheme ? scheme->num_microbatches : micro;
  source.microbatches_input = args.microbatches_given ? "--microbatches" : args.stages_file + ": n_micro";
  source.description = std::to_string(costs.num_stages()) + " stages from " + args.stages_file;
  source.stages = stage_file_source(std::move(costs), args.mem_limit.empty() ? 0 : parse_bytes(args.mem_limit));
  return source;
}

// Flags are checked before any file is read: a bad value is named, never replaced by a default.
void check_flags(const PipelineArgs& args) {
  if (args.microbatches_given && args.microbatches < 1)
    throw CliError("--microbatches " + std::to_string(args.microbatches) + ": the microbatch count must be at least 1");
  if (args.pp_given && args.pp < 1)
    throw CliError("--pp " + std::to_string(args.pp) + ": the pipeline degree must be at least 1");
  if (!args.mem_limit.empty()) parse_bytes(args.mem_limit);
  const int given = !args.stages_file.empty() + !args.model.empty() + !args.hf_config.empty();
  if (given != 1) throw CliError("give exactly one of --model NAME (see `gantry models`), --hf-config FILE or --stages FILE");
}

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
  const Source source = args.stages_file.empty() ? model_source(args, given.get()) : file_source(args, given.get());
  std::vector<std::pair<std::string, PipelineResult>> results;
  std::vector<PipelineScheme> simulated;
  for (const std::string& name : names) {
    auto built = given ? load_pipeline(*given, *source.stages, args.scheme_file)
                       : build_pipeline(name, *source.stages, source.microbatches, source.microbatches_input);
    if (!built) throw CliError(built.error().message);
    PipelineRun run = std::move(built).value();
    const std::string label = given ? args.scheme_file : name;
    if (!args.save_scheme.empty()) {
      auto written = write_text_file(args.save_scheme, scheme_to_json(run.scheme));
      if (!written) throw CliError(written.error().message);
    }
    PipelineRunInfo info;
    info.links = args.links == "unlimited" ? LinkModel::unlimited : LinkModel::contention;
    info.record = args.out.wants_timeline();
    info.tokens_per_microbatch = source.tokens_per_microbatch;
    info.device_peak_flops = source.peak_flops;
    auto r = simulate_pipeline(run.scheme, run.costs, info);
    if (!r) throw CliError(r.error().message);
    if (args.out.wants_timeline() && r.value().completed) {
      TimelineLabels labels;
      labels.title = "pipeline " + label + ": " + source.description + ", " +
                     std::to_string(run.scheme.num_microbatches) + " microbatches";
      for (int d = 0; d < run.scheme.num_devices(); ++d) labels.device_names.push_back("device " + std::to_string(d));
      labels.group_names = {"F", "B", "W", "BW"};
      for (const PipeTask& t : r.value().compiled.task_of) labels.group_of.push_back(static_cast<int>(t.op));
      write_timeline_files(args.out, r.value().compiled.graph, r.value().sim, labels);
    }
    results.emplace_back(label, std::move(r).value());
    simulated.push_back(std::move(run.scheme));
  }
  if (args.out.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [name, r] : results) j.push_back(result_json(name, r));
    std::cout << (j.size() == 1 ? j[0] : j).dump(2) << "\n";
    return;
  }
  std::cout << source.description << ", " << source.microbatches << " microbatches\n\n";
  print_table(results);
  // The same orders run with blocking point-to-point calls (no batched isend/irecv):
  std::cout << "\nwith blocking send/recv:";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const BlockingCheck check = check_blocking_order(simulated[i]);
    std::cout << "\n  " << results[i].first << ": " << (check.progresses ? "progresses" : "DEADLOCK, " + check.cycle);
  }
  std::cout << "\n";
}

void add_common(CLI::App& cmd, PipelineArgs& args) {
  cmd.add_option("--model", args.model, "catalog model (see `gantry models`)");
  cmd.add_option("--hf-config", args.hf_config, "a Hugging Face config.json of a Llama, Mixtral, Jamba or Nemotron-H model");
  cmd.add_option("--profile", args.profile,
                 "measured operator times (a vidur profiling mlp.csv) for the Llama layers of --model / --hf-config");
  cmd.add_option("--stages", args.stages_file,
                 "per-stage costs instead of a model: zero-bubble GraphConfig JSON (n_stages, n_micro, cost_f, cost_b, "
                 "cost_w, cost_comm, mem_f, mem_b, mem_w, max_mem)");
  cmd.add_option("--cluster", args.cluster, "cluster preset or YAML file (with --model / --hf-config)")->capture_default_str();
  cmd.add_option("--pp", args.pp, "pipeline degree (default: every device of the cluster)");
  cmd.add_option("--microbatches", args.microbatches, "microbatches per iteration (default: 2 x pp, or the file's n_micro)");
  cmd.add_option("--microbatch-size", args.microbatch_size, "sequences per microbatch")->capture_default_str();
  cmd.add_option("--seq", args.seq, "sequence length")->capture_default_str();
  cmd.add_option("--partition", args.partition, "uniform (layer count), params (parameter-balanced) or compute (min-max time)")
      ->check(CLI::IsMember({"uniform", "params", "compute"}))
      ->capture_default_str();
  cmd.add_option("--efficiency", args.efficiency,
                 "achieved fraction of peak FLOP/s per layer type, e.g. attention=0.5,mlp=0.65 (defaults: docs/models.md)");
  cmd.add_option("--mem-limit", args.mem_limit, "memory limit per device, e.g. 80GiB (default: device memory or the file's max_mem)");
  cmd.add_option("--links", args.links, "contention (one transfer at a time per device pair) or unlimited")
      ->check(CLI::IsMember({"contention", "unlimited"}));
}

// Which numbers were given on the command line (a given 0 or -5 is an error, not the default).
void note_given(CLI::App& cmd, PipelineArgs& args) {
  args.microbatches_given = cmd.get_option("--microbatches")->count() > 0;
  args.pp_given = cmd.get_option("--pp")->count() > 0;
}

}  // namespace

void add_pipeline_command(CLI::App& app) {
  CLI::App* pipeline = app.add_subcommand("pipeline", "simulate and compare pipeline-parallel schemes");
  pipeline->require_subcommand(1);
  const ScheduleRegistry& registry = schedule_registry();
  auto sim_args = std::make_shared<PipelineArgs>();
  CLI::App* sim = pipeline->add_subcommand("simulate", "simulate one schedule: iteration time, bubbles, memory, overlap");
  add_common(*sim, *sim_args);
  sim->add_option("--schedule", sim_args->schedule, "one of:\n" + registry.help())->capture_default_str();
  sim->add_option("--scheme", sim_args->scheme_file,
                  "simulate this scheme JSON instead, with the costs of its own partition and placement "
                  "(see docs/formats.md)");
  sim->add_option("--save-scheme", sim_args->save_scheme, "write the simulated scheme as JSON");
  sim_args->out.add_to(*sim);
  sim->callback([sim, sim_args] {
    note_given(*sim, *sim_args);
    run_one(*sim_args, {sim_args->schedule});
  });
  auto cmp_args = std::make_shared<PipelineArgs>();
  CLI::App* cmp = pipeline->add_subcommand("compare", "every baseline schedule side by side");
  add_common(*cmp, *cmp_args);
  cmp->add_option("--schedules", cmp_args->schedules, "schedules to compare (a comma list) from:\n" + registry.help())
      ->delimiter(',')
      ->capture_default_str();
  cmp_args->out.add_to(*cmp, false);
  cmp->callback([cmp, cmp_args] {
    note_given(*cmp, *cmp_args);
    run_one(*cmp_args, cmp_args->schedules);
  });
}

}  // namespace gantry::cli
