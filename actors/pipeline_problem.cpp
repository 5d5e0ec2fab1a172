#include "actors/pipeline_problem.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/cluster.hpp"
#include "core/json_util.hpp"
#include "core/text.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "tuner/pipeline/layer_bound.hpp"
#include "tuner/pipeline/memory_fitting.hpp"
#include "tuner/pipeline/work_bound.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/pipeline_fingerprint.hpp"
#include "workloads/pipeline_stages.hpp"
#include "workloads/vidur_profile.hpp"

namespace gantry {

namespace {

// "attention=0.5,mlp=0.65": achieved fraction of peak FLOP/s per layer type.
Status apply_efficiency(const std::string& text, PipelineModelOptions& options) {
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
      return make_error("--efficiency '" + item + "': expected TYPE=FRACTION with TYPE one of embedding, attention, mamba1, "
                        "mamba2, mlp, moe, logits and 0 < FRACTION <= 1");
    options.efficiency[index] = value;
  }
  return Ok{};
}

Result<LinkModel> links_of(const PipelineProblemSpec& spec) {
  auto links = parse_link_model(spec.links);
  if (!links) return make_error("--links " + spec.links + ": expected contention or unlimited");
  return *links;
}

Result<PipelineSource> model_source(const PipelineProblemSpec& spec, const PipelineScheme* scheme,
                                    const std::string& scheme_label) {
  ModelShape shape;
  shape.seq = spec.seq;
  shape.microbatch = spec.microbatch_size;
  const bool hf = !spec.hf_config.empty();
  auto layers = hf ? model_layers_from_hf_config(spec.hf_config, spec.hf_config_label, shape) : model_layers(spec.model, shape);
  if (!layers) return layers.error();
  const std::string label = hf ? spec.hf_config_label : spec.model;
  auto cluster = Cluster::from_yaml(spec.cluster_yaml, "the pipeline problem's cluster");
  if (!cluster) return cluster.error();
  const Cluster& c = cluster.value();
  const int p = spec.pp > 0 ? spec.pp : scheme ? scheme->num_devices() : c.size();
  if (p > c.size())
    return make_error((spec.pp > 0 ? "--pp " : scheme_label + ": the scheme runs on ") + std::to_string(p) +
                      (spec.pp > 0 ? "" : " devices") + ": cluster " + c.name() + " has only " + std::to_string(c.size()) +
                      " devices");
  PipelineModelOptions model_options;
  if (Status ok = apply_efficiency(spec.efficiency, model_options); !ok) return ok.error();
  if (!spec.profile.empty()) {  // measured operator times replace the FLOP-based ones
    const std::int64_t tokens = spec.seq * spec.microbatch_size;
    auto profile = parse_vidur_profile(spec.profile, spec.profile_label, tokens);
    if (!profile) return profile.error();
    // The profile was measured on the first device's kind; others scale by their peak.
    const Device& profiled = c.device(0);
    auto times = measured_layer_times(layers.value(), profile.value(), tokens, profiled);
    if (!times) return make_error(spec.profile_label + ": " + times.error().message);
    model_options.measured = std::move(times).value();
    model_options.measured_kind = profiled.kind;
    model_options.measured_peak_flops = profiled.peak_flops;
  }
  auto method = parse_partition_method(spec.partition);
  if (!method) return method.error();
  auto links = links_of(spec);
  if (!links) return links.error();
  PipelineSource source;
  source.microbatches = spec.microbatches > 0 ? spec.microbatches : scheme ? scheme->num_microbatches : 2 * p;
  source.microbatches_input = spec.microbatches > 0 ? "--microbatches" : "the default microbatch count (2 x pp)";
  source.tokens_per_microbatch = static_cast<double>(spec.seq * spec.microbatch_size);
  for (int d = 0; d < p; ++d) source.peak_flops.push_back(c.device(d).peak_flops);
  source.links = links.value();
  source.has_layers = true;
  source.layers = static_cast<int>(layers.value().size());
  source.problem_label =
      label + " (" + std::to_string(layers.value().size()) + " layers) on " + c.name() + ", pp " + std::to_string(p);
  source.description =
      source.problem_label + ", " + (scheme ? "partition from " + scheme_label : spec.partition + " partition");
  source.problem = pipeline_fingerprint(layers.value(), model_options, p, source.microbatches, spec.mem_limit);
  source.runtime = pipeline_runtime_fingerprint(&c, source.links);
  source.cluster_name = c.name();
  LayerModel model;
  model.params = layer_params(layers.value());
  for (int d = 0; d < p; ++d) model.time.push_back(layer_times(layers.value(), c.device(d), model_options));
  model.stage_costs = stage_cost_function(std::move(layers).value(), std::move(cluster).value(), model_options);
  source.stages = model_stage_source(std::move(model), p, method.value(), spec.mem_limit);
  return source;
}

Result<PipelineSource> file_source(const PipelineProblemSpec& spec, const PipelineScheme* scheme) {
  if (spec.pp > 0) return make_error("--pp conflicts with --stages: the stage file fixes the pipeline degree (n_stages)");
  auto parsed = read_stage_costs_json(spec.stages, spec.stages_label);
  if (!parsed) return parsed.error();
  auto links = links_of(spec);
  if (!links) return links.error();
  auto [costs, micro] = parsed.value();
  PipelineSource source;
  source.microbatches = spec.microbatches > 0 ? spec.microbatches : scheme ? scheme->num_microbatches : micro;
  source.microbatches_input = spec.microbatches > 0 ? "--microbatches" : spec.stages_label + ": n_micro";
  source.links = links.value();
  source.description = std::to_string(costs.num_stages()) + " stages from " + spec.stages_label;
  source.problem_label = source.description;
  source.problem = pipeline_fingerprint(costs, source.microbatches, spec.mem_limit);
  source.runtime = pipeline_runtime_fingerprint(nullptr, source.links);
  source.stages = stage_file_source(std::move(costs), spec.mem_limit);
  return source;
}

const char* const kFields[] = {"model", "hf_config", "hf_config_label", "stages", "stages_label", "cluster", "profile",
                               "profile_label", "efficiency", "partition", "pp", "microbatches", "seq",
                               "microbatch_size", "mem_limit", "links"};

}  // namespace

std::string pipeline_problem_json(const PipelineProblemSpec& s) {
  const nlohmann::json j = {{"model", s.model}, {"hf_config", s.hf_config}, {"hf_config_label", s.hf_config_label},
                            {"stages", s.stages}, {"stages_label", s.stages_label}, {"cluster", s.cluster_yaml},
                            {"profile", s.profile}, {"profile_label", s.profile_label}, {"efficiency", s.efficiency},
                            {"partition", s.partition}, {"pp", s.pp}, {"microbatches", s.microbatches},
                            {"seq", s.seq}, {"microbatch_size", s.microbatch_size}, {"mem_limit", s.mem_limit},
                            {"links", s.links}};
  return json_text(j);
}

Result<PipelineProblemSpec> parse_pipeline_problem(const std::string& json, const std::string& what) {
  auto parsed = parse_json(json, what);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = parsed.value();
  if (!j.is_object()) return make_error(what + ": not a JSON object");
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* f : kFields) known = known || key == f;
    if (!known) return make_error(what + ": unknown field \"" + key + "\"");
  }
  PipelineProblemSpec s;
  try {
    auto text = [&](const char* key, std::string& out) {
      if (j.contains(key)) out = j.at(key).get<std::string>();
    };
    text("model", s.model);
    text("hf_config", s.hf_config);
    text("hf_config_label", s.hf_config_label);
    text("stages", s.stages);
    text("stages_label", s.stages_label);
    text("cluster", s.cluster_yaml);
    text("profile", s.profile);
    text("profile_label", s.profile_label);
    text("efficiency", s.efficiency);
    text("partition", s.partition);
    text("links", s.links);
    if (j.contains("pp")) s.pp = j.at("pp").get<int>();
    if (j.contains("microbatches")) s.microbatches = j.at("microbatches").get<int>();
    if (j.contains("seq")) s.seq = j.at("seq").get<std::int64_t>();
    if (j.contains("microbatch_size")) s.microbatch_size = j.at("microbatch_size").get<std::int64_t>();
    if (j.contains("mem_limit")) s.mem_limit = j.at("mem_limit").get<double>();
  } catch (const nlohmann::json::exception& e) {
    return make_error(what + ": " + e.what());
  }
  const int given = !s.model.empty() + !s.hf_config.empty() + !s.stages.empty();
  if (given != 1) return make_error(what + ": give exactly one of model, hf_config or stages");
  if (s.stages.empty() && s.cluster_yaml.empty()) return make_error(what + ": a model needs a cluster");
  if (s.pp < 0 || s.microbatches < 0 || s.seq < 1 || s.microbatch_size < 1 || !(s.mem_limit >= 0))
    return make_error(what + ": pp and microbatches must be >= 0, seq and microbatch_size >= 1, mem_limit >= 0");
  return s;
}

Result<PipelineSource> build_pipeline_source(const PipelineProblemSpec& spec, const PipelineScheme* scheme,
                                             const std::string& scheme_label) {
  return spec.stages.empty() ? model_source(spec, scheme, scheme_label) : file_source(spec, scheme);
}

PipelineRunInfo pipeline_run_info(const PipelineSource& source, bool record) {
  PipelineRunInfo info;
  info.links = source.links;
  info.record = record;
  info.tokens_per_microbatch = source.tokens_per_microbatch;
  info.device_peak_flops = source.peak_flops;
  return info;
}

Result<std::vector<PipelineCandidate>> pipeline_tuning_starts(const PipelineProblemSpec& spec) {
  std::vector<PipelineCandidate> starts, fitting;
  const bool layers = spec.stages.empty();
  for (const char* partition : {"compute", "params", "uniform"}) {
    PipelineProblemSpec variant = spec;
    variant.partition = partition;
    auto source = build_pipeline_source(variant);
    if (!source) return source.error();
    for (StageLayout layout : {StageLayout{1, false}, StageLayout{2, true}}) {
      auto c = layout_candidate(*source.value().stages, layout);
      if (c) starts.push_back(std::move(c).value());
    }
    if (!layers) break;  // per-stage costs have one partition
    // Partitions that leave the first stages room for their warm-up where memory binds (they do
    // not depend on the source's own partition). Optional starts: one that cannot be built is left out.
    if (partition == std::string("compute"))
      if (auto found = memory_fitting_candidates(*source.value().stages, source.value().layers, source.value().microbatches))
        fitting = std::move(found).value();
  }
  for (PipelineCandidate& c : fitting)  // where memory does not bind, r = 1 gives a start above again
    if (std::find(starts.begin(), starts.end(), c) == starts.end()) starts.push_back(std::move(c));
  return starts;
}

double pipeline_lower_bound(const StageCosts& costs, int microbatches, int devices) {
  double work = 0;
  for (int s = 0; s < costs.num_stages(); ++s) work += costs.f[s] + costs.b[s] + costs.w[s];
  return work * microbatches / devices;
}

Result<double> pipeline_work_bound(const PipelineSource& source) {
  if (!source.has_layers) {
    // Per-stage costs are each device's own work (its stages share it; no move shifts work
    // between devices): the busiest device's, at least the average.
    auto set = source.stages->stages(StageLayout{});
    if (!set) return set.error();
    const StageCosts& c = set.value().costs;
    double busiest = 0;
    for (int s = 0; s < c.num_stages(); ++s) busiest = std::max(busiest, c.f[s] + c.b[s] + c.w[s]);
    return busiest * source.microbatches;
  }
  auto times = per_layer_times(*source.stages, source.layers);
  if (!times) return times.error();
  return divisible_work_bound(times.value()) * source.microbatches;
}

Result<double> pipeline_layer_bound(const PipelineSource& source, int max_stages_per_device) {
  if (!source.has_layers) return 0.0;
  auto times = per_layer_times(*source.stages, source.layers);
  if (!times) return times.error();
  std::vector<double> fastest = times.value().front();
  for (const std::vector<double>& device : times.value())
    for (int i = 0; i < source.layers; ++i) fastest[i] = std::min(fastest[i], device[i]);
  return whole_layer_bound(fastest, source.stages->devices(), max_stages_per_device) * source.microbatches;
}

Status check_static_memory_fits(const PipelineSource& source) {
  if (!source.has_layers) return Ok{};
  auto layers = per_layer_costs(*source.stages, source.layers, 0);
  if (!layers) return layers.error();
  const StageCosts& k = layers.value();
  const int devices = source.stages->devices();
  double room = 0, largest_room = 0;
  for (int d = 0; d < devices; ++d) {
    const double limit = d < static_cast<int>(k.max_mem.size()) ? k.max_mem[d] : 0;
    if (limit <= 0) return Ok{};  // a device without a limit holds any layers
    room += limit;
    largest_room = std::max(largest_room, limit);
  }
  const auto largest = std::max_element(k.static_memory.begin(), k.static_memory.end());
  if (largest == k.static_memory.end()) return Ok{};
  const std::string advice = "use more pipeline devices (--pp), devices with more memory or a higher --mem-limit";
  if (*largest > largest_room)
    return make_error(source.problem_label + ": layer " + std::to_string(largest - k.static_memory.begin()) +
                      " alone needs " + format_bytes(*largest) +
                      " for its parameters, gradients and optimizer state, more than a device's memory limit (" +
                      format_bytes(largest_room) + "): no partition fits; " + advice);
  double total = 0;
  for (double bytes : k.static_memory) total += bytes;
  if (total > room)
    return make_error(source.problem_label + ": its parameters, gradients and optimizer state need " + format_bytes(total) +
                      " in all, " + format_bytes(total / devices) + " a device, more than the memory limit of its " +
                      std::to_string(devices) + " devices (" + format_bytes(room) + " in all): no partition fits; " + advice);
  return Ok{};
}

}  // namespace gantry
