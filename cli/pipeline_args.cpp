#include "cli/pipeline_args.hpp"

#include <cmath>

#include "core/json_util.hpp"
#include "sim/timeline_export.hpp"
#include "tuner/pipeline/schedule_registry.hpp"

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

namespace {

// A file a flag names; an empty one is an error (an empty text reads as "not given" further on:
// an empty --stages file was reported as "unknown model ''", an empty --profile ignored).
std::string file_text(const char* flag, const std::string& path) {
  auto text = read_text_file(path);
  if (!text) throw CliError(std::string(flag) + ": " + text.error().message);
  if (text.value().find_first_not_of(" \t\r\n") == std::string::npos)
    throw CliError(std::string(flag) + " " + path + ": the file is empty");
  return text.value();
}

}  // namespace

PipelineProblemSpec pipeline_problem(const PipelineArgs& args) {
  PipelineProblemSpec spec;
  spec.model = args.model;
  if (!args.hf_config.empty()) {
    spec.hf_config = file_text("--hf-config", args.hf_config);
    spec.hf_config_label = args.hf_config;
  }
  if (!args.stages_file.empty()) {
    spec.stages = file_text("--stages", args.stages_file);
    spec.stages_label = args.stages_file;
  } else {
    auto cluster = Cluster::load(args.cluster);
    if (!cluster) throw CliError(cluster.error().message);
    spec.cluster_yaml = cluster.value().to_yaml();
  }
  if (!args.profile.empty()) {
    spec.profile = file_text("--profile", args.profile);
    spec.profile_label = args.profile;
  }
  spec.efficiency = args.efficiency;
  spec.partition = args.partition;
  spec.pp = args.pp_given ? args.pp : 0;
  spec.microbatches = args.microbatches_given ? args.microbatches : 0;
  spec.seq = args.seq;
  spec.microbatch_size = args.microbatch_size;
  spec.mem_limit = args.mem_limit.empty() ? 0 : parse_bytes(args.mem_limit);
  spec.links = args.links;
  return spec;
}

void check_flags(const PipelineArgs& args) {
  if (args.microbatches_given && args.microbatches < 1)
    throw CliError("--microbatches " + std::to_string(args.microbatches) + ": the microbatch count must be at least 1");
  if (args.pp_given && args.pp < 1)
    throw CliError("--pp " + std::to_string(args.pp) + ": the pipeline degree must be at least 1");
  if (!args.mem_limit.empty()) parse_bytes(args.mem_limit);
  const int given = !args.stages_file.empty() + !args.model.empty() + !args.hf_config.empty();
  if (given != 1) throw CliError("give exactly one of --model NAME (see `gantry models`), --hf-config FILE or --stages FILE");
  // A misspelt schedule is an error at once, not a row that says it cannot be built.
  for (const std::string& name : args.schedules)
    if (auto found = schedule_registry().find(name); !found) throw CliError("--schedules: " + found.error().message);
  if (auto found = schedule_registry().find(args.schedule); !found) throw CliError("--schedule: " + found.error().message);
}



void write_pipeline_timeline(const OutputArgs& out, const std::string& title, const PipelineResult& result) {
  if (!out.wants_timeline() || !result.completed) return;
  TimelineLabels labels;
  labels.title = title;
  const int devices = result.compiled.devices;
  for (std::size_t d = 0; d < result.sim.busy.size(); ++d) {
    const int device = static_cast<int>(d) % devices;
    const char* what = static_cast<int>(d) < devices ? "" : static_cast<int>(d) < 2 * devices ? " to host" : " from host";
    labels.device_names.push_back("device " + std::to_string(device) + what);
  }
  labels.group_names = {"F", "B", "W", "BW", "offload", "reload"};
  for (std::size_t op = 0; op < result.compiled.task_of.size(); ++op)
    labels.group_of.push_back(result.compiled.host_copy[op] ? 3 + result.compiled.host_copy[op]
                                                           : static_cast<int>(result.compiled.task_of[op].op));
  write_timeline_files(out, result.compiled.graph, result.sim, labels);
}

PipelineSource pipeline_source(const PipelineArgs& args, const PipelineScheme* scheme) {
  auto source = build_pipeline_source(pipeline_problem(args), scheme, args.scheme_file);
  if (!source) throw CliError(source.error().message);
  return std::move(source).value();
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
  cmd.add_option("--hf-config", args.hf_config, "a Hugging Face config.json: Llama, Mistral, Qwen2/3, Mixtral, Qwen2/3-MoE, Jamba, Nemotron-H, Mamba, "
                 "Falcon-Mamba, Mamba-2 or Bamba (docs/models.md)")->check(file_path());
  cmd.add_option("--profile", args.profile,
                 "measured operator times (a vidur profiling mlp.csv) for the Llama layers of --model / --hf-config")
      ->check(file_path());
  cmd.add_option("--stages", args.stages_file,
                 "per-stage costs instead of a model: zero-bubble GraphConfig JSON (n_stages, n_micro, cost_f, cost_b, "
                 "cost_w, cost_comm, mem_f, mem_b, mem_w, max_mem)")
      ->check(file_path());
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
