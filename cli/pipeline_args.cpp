#include "cli/pipeline_args.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/json_util.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/timeline_export.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/pipeline_fingerprint.hpp"
#include "workloads/pipeline_stages.hpp"
#include "workloads/vidur_profile.hpp"

namespace gantry::cli {

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
namespace {

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

}  // namespace

PipelineSource model_source(const PipelineArgs& args, const PipelineScheme* scheme) {
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
    // The profile was measured on the first device's kind; others scale by their peak.
    const Device& profiled = cluster.value().device(0);
    auto times = measured_layer_times(layers.value(), profile.value(), tokens, profiled);
    if (!times) throw CliError(args.profile + ": " + times.error().message);
    model_options.measured = std::move(times).value();
    model_options.measured_kind = profiled.kind;
    model_options.measured_peak_flops = profiled.peak_flops;
  }
  const auto method = parse_partition_method(args.partition);
  if (!method) throw CliError(method.error().message);
  PipelineSource source;
  source.microbatches = args.microbatches_given ? args.microbatches : scheme ? scheme->num_microbatches : 2 * p;
  source.microbatches_input = args.microbatches_given ? "--microbatches" : "the default microbatch count (2 x pp)";
  source.tokens_per_microbatch = static_cast<double>(args.seq * args.microbatch_size);
  for (int d = 0; d < p; ++d) source.peak_flops.push_back(cluster.value().device(d).peak_flops);
  source.has_layers = true;
  source.problem_label = label + " (" + std::to_string(layers.value().size()) + " layers) on " + cluster.value().name() +
                         ", pp " + std::to_string(p);
  source.description = label + " (" + std::to_string(layers.value().size()) + " layers) on " + cluster.value().name() +
                       ", pp " + std::to_string(p) + ", " +
                       (scheme ? "partition from " + args.scheme_file : args.partition + " partition");
  const double mem_limit = args.mem_limit.empty() ? 0 : parse_bytes(args.mem_limit);
  source.problem = pipeline_fingerprint(layers.value(), model_options, p, source.microbatches, mem_limit);
  source.runtime = pipeline_runtime_fingerprint(&cluster.value(), pipeline_links(args));
  source.cluster_name = cluster.value().name();
  LayerModel model;
  model.params = layer_params(layers.value());
  for (int d = 0; d < p; ++d) model.time.push_back(layer_times(layers.value(), cluster.value().device(d), model_options));
  model.stage_costs = stage_cost_function(std::move(layers).value(), std::move(cluster).value(), model_options);
  source.stages = model_stage_source(std::move(model), p, method.value(), mem_limit);
  return source;
}

PipelineSource file_source(const PipelineArgs& args, const PipelineScheme* scheme) {
  if (args.pp_given)
    throw CliError("--pp conflicts with --stages: the stage file fixes the pipeline degree (n_stages)");
  auto text = read_text_file(args.stages_file);
  if (!text) throw CliError(text.error().message);
  auto parsed = read_stage_costs_json(text.value(), args.stages_file);
  if (!parsed) throw CliError(parsed.error().message);
  auto [costs, micro] = parsed.value();
  PipelineSource source;
  source.microbatches = args.microbatches_given ? args.microbatches : scheme ? scheme->num_microbatches : micro;
  source.microbatches_input = args.microbatches_given ? "--microbatches" : args.stages_file + ": n_micro";
  source.description = std::to_string(costs.num_stages()) + " stages from " + args.stages_file;
  source.problem_label = source.description;
  const double mem_limit = args.mem_limit.empty() ? 0 : parse_bytes(args.mem_limit);
  source.problem = pipeline_fingerprint(costs, source.microbatches, mem_limit);
  source.runtime = pipeline_runtime_fingerprint(nullptr, pipeline_links(args));
  source.stages = stage_file_source(std::move(costs), mem_limit);
  return source;
}

void check_flags(const PipelineArgs& args) {
  if (args.microbatches_given && args.microbatches < 1)
    throw CliError("--microbatches " + std::to_string(args.microbatches) + ": the microbatch count must be at least 1");
  if (args.pp_given && args.pp < 1)
    throw CliError("--pp " + std::to_string(args.pp) + ": the pipeline degree must be at least 1");
  if (!args.mem_limit.empty()) parse_bytes(args.mem_limit);
  const int given = !args.stages_file.empty() + !args.model.empty() + !args.hf_config.empty();
  if (given != 1) throw CliError("give exactly one of --model NAME (see `gantry models`), --hf-config FILE or --stages FILE");
}


LinkModel pipeline_links(const PipelineArgs& args) {
  return parse_link_model(args.links).value_or(LinkModel::contention);  // the flag is checked by CLI11
}

PipelineRunInfo pipeline_run_info(const PipelineArgs& args, const PipelineSource& source, bool record) {
  PipelineRunInfo info;
  info.links = pipeline_links(args);
  info.record = record;
  info.tokens_per_microbatch = source.tokens_per_microbatch;
  info.device_peak_flops = source.peak_flops;
  return info;
}

void write_pipeline_timeline(const OutputArgs& out, const std::string& title, const PipelineResult& result) {
  if (!out.wants_timeline() || !result.completed) return;
  TimelineLabels labels;
  labels.title = title;
  for (std::size_t d = 0; d < result.sim.busy.size(); ++d) labels.device_names.push_back("device " + std::to_string(d));
  labels.group_names = {"F", "B", "W", "BW"};
  for (const PipeTask& t : result.compiled.task_of) labels.group_of.push_back(static_cast<int>(t.op));
  write_timeline_files(out, result.compiled.graph, result.sim, labels);
}

PipelineSource pipeline_source(const PipelineArgs& args, const PipelineScheme* scheme) {
  return args.stages_file.empty() ? model_source(args, scheme) : file_source(args, scheme);
}

void add_pipeline_options(CLI::App& cmd, PipelineArgs& args) {
  add_pipeline_model_options(cmd, args);
  cmd.add_option("--cluster", args.cluster, "cluster preset or YAML file (with --model / --hf-config)")->capture_default_str();
  cmd.add_option("--partition", args.partition, "uniform (layer count), params (parameter-balanced) or compute (min-max time)")
      ->check(CLI::IsMember({"uniform", "params", "compute"}))
      ->capture_default_str();
  cmd.add_option("--links", args.links, "contention (one transfer at a time per device pair) or unlimited")
      ->check(CLI::IsMember({"contention", "unlimited"}));
}

void add_pipeline_model_options(CLI::App& cmd, PipelineArgs& args) {
  cmd.add_option("--model", args.model, "catalog model (see `gantry models`)");
  cmd.add_option("--hf-config", args.hf_config, "a Hugging Face config.json of a Llama, Mixtral, Jamba or Nemotron-H model");
  cmd.add_option("--profile", args.profile,
                 "measured operator times (a vidur profiling mlp.csv) for the Llama layers of --model / --hf-config");
  cmd.add_option("--stages", args.stages_file,
                 "per-stage costs instead of a model: zero-bubble GraphConfig JSON (n_stages, n_micro, cost_f, cost_b, "
                 "cost_w, cost_comm, mem_f, mem_b, mem_w, max_mem)");
  cmd.add_option("--pp", args.pp, "pipeline degree (default: every device of the cluster)");
  cmd.add_option("--microbatches", args.microbatches, "microbatches per iteration (default: 2 x pp, or the file's n_micro)");
  cmd.add_option("--microbatch-size", args.microbatch_size, "sequences per microbatch")->capture_default_str();
  cmd.add_option("--seq", args.seq, "sequence length")->capture_default_str();
  cmd.add_option("--efficiency", args.efficiency,
                 "achieved fraction of peak FLOP/s per layer type, e.g. attention=0.5,mlp=0.65 (defaults: docs/models.md)");
  cmd.add_option("--mem-limit", args.mem_limit, "memory limit per device, e.g. 80GiB (default: device memory or the file's max_mem)");
}

bool names_pipeline(const PipelineArgs& args) {
  return !args.model.empty() || !args.hf_config.empty() || !args.stages_file.empty();
}

void note_given(CLI::App& cmd, PipelineArgs& args) {
  args.microbatches_given = cmd.get_option("--microbatches")->count() > 0;
  args.pp_given = cmd.get_option("--pp")->count() > 0;
}

}  // namespace gantry::cli
