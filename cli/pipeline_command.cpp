// gantry pipeline: simulate pipeline schemes (partition + placement + per-device F/B/W order) and
// compare the baseline schedules.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <functional>
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
#include "tuner/pipeline/partition.hpp"
#include "tuner/pipeline/schedules.hpp"
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
  std::int64_t microbatch_size = 1, seq = 4096;
  std::vector<std::string> schedules = {"gpipe", "1f1b", "interleaved:2", "zb", "zbv"};
  OutputArgs out;
  std::string links = "contention";
};

// Per-device costs split evenly over v chunks (virtual stages d, p + d, ...).
StageCosts split_into_chunks(const StageCosts& c, int v) {
  StageCosts out;
  const int p = c.num_stages();
  for (int chunk = 0; chunk < v; ++chunk)
    for (int d = 0; d < p; ++d) {
      out.f.push_back(c.f[d] / v);
      out.b.push_back(c.b[d] / v);
      out.w.push_back(c.w[d] / v);
      out.comm.push_back(c.comm[d]);
      out.mem_f.push_back(c.mem_f[d] / v);
      out.mem_b.push_back(c.mem_b[d] / v);
      out.mem_w.push_back(c.mem_w[d] / v);
      out.static_memory.push_back(c.static_memory[d] / v);
      out.flops.push_back(c.flops[d] / v);
    }
  out.max_mem = c.max_mem;
  return out;
}

struct Run {
  std::string name;
  PipelineScheme scheme;
  StageCosts costs;
};

// Where per-stage costs come from: a stage-cost file (split evenly for interleaved chunks) or a
// model partitioned into p x v stages on the cluster.
struct StageSource {
  // Costs of p x chunks stages; `v_shape` places chunk 1 in reverse (stage k on device 2p-1-k).
  std::function<std::pair<StageCosts, Partition>(int chunks, bool v_shape)> costs;  // partition empty for files
  int devices = 0, microbatches = 0;
  double tokens_per_microbatch = 0, peak_flops = 0;
  std::string description;
};

int chunks_of(const std::string& name) {
  if (name == "zbv") return 2;
  if (name.rfind("interleaved", 0) != 0) return 1;
  if (name.size() == 11) return 2;
  const int v = name[11] == ':' ? std::atoi(name.c_str() + 12) : 0;
  if (v < 1) throw CliError("schedule '" + name + "': expected interleaved or interleaved:V with V >= 1");
  return v;
}

Run build(const std::string& name, const StageSource& source) {
  const int p = source.devices, micro = source.microbatches;
  const int v = chunks_of(name);
  auto [costs, partition] = source.costs(v, name == "zbv");
  Result<PipelineScheme> scheme =
      make_error("unknown schedule '" + name + "' (expected gpipe, 1f1b, interleaved[:v], zb, zbv)");
  if (name == "gpipe") scheme = make_gpipe(p, micro);
  if (name == "1f1b") scheme = make_1f1b(p, micro);
  if (name == "zb") scheme = make_zb_h1(p, micro, costs);
  if (name == "zbv") scheme = make_zb_v(p, micro, costs);
  if (name.rfind("interleaved", 0) == 0) scheme = make_interleaved(p, v, micro);
  if (!scheme) throw CliError(scheme.error().message);
  scheme.value().partition = partition;
  return Run{name, std::move(scheme).value(), std::move(costs)};
}

double parse_bytes(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  const std::string unit = end;
  if (unit == "GiB") value *= 1024.0 * 1024 * 1024;
  else if (unit == "MiB") value *= 1024.0 * 1024;
  else if (unit == "GB") value *= 1e9;
  else if (!unit.empty() || end == text.c_str()) throw CliError("--mem-limit '" + text + "': expected a number of bytes or e.g. 80GiB");
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

StageSource model_source(const PipelineArgs& args) {
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
  const int p = args.pp > 0 ? args.pp : cluster.value().size();
  if (p > cluster.value().size())
    throw CliError("--pp " + std::to_string(p) + ": cluster " + cluster.value().name() + " has only " +
                   std::to_string(cluster.value().size()) + " devices");
  auto shared_layers = std::make_shared<std::vector<LayerCost>>(std::move(layers).value());
  auto shared_cluster = std::make_shared<Cluster>(std::move(cluster).value());
  auto model_options = std::make_shared<PipelineModelOptions>();
  apply_efficiency(args.efficiency, *model_options);
  if (!args.profile.empty()) {  // measured operator times replace the FLOP-based ones
    const std::int64_t tokens = args.seq * args.microbatch_size;
    auto profile = read_vidur_profile(args.profile, tokens);
    if (!profile) throw CliError(profile.error().message);
    auto times = measured_layer_times(*shared_layers, profile.value(), tokens, shared_cluster->device(0));
    if (!times) throw CliError(args.profile + ": " + times.error().message);
    model_options->measured = std::move(times).value();
  }
  StageSource source;
  source.devices = p;
  source.microbatches = args.microbatches > 0 ? args.microbatches : 2 * p;
  source.tokens_per_microbatch = static_cast<double>(args.seq * args.microbatch_size);
  source.peak_flops = shared_cluster->device(0).peak_flops;
  source.description = label + " (" + std::to_string(shared_layers->size()) + " layers) on " + shared_cluster->name() +
                       ", pp " + std::to_string(p) + ", " + args.partition + " partition";
  const std::string method = args.partition;
  const double limit = args.mem_limit.empty() ? 0 : parse_bytes(args.mem_limit);
  source.costs = [shared_layers, shared_cluster, model_options, p, method, limit](int v, bool v_shape) {
    const int stages = p * v;
    Result<Partition> partition = make_error("unknown partition '" + method + "' (expected uniform, params, compute)");
    if (method == "uniform") partition = partition_uniform(static_cast<int>(shared_layers->size()), stages);
    if (method == "params" || method == "compute") {
      std::vector<double> weights;
      if (method == "params")
        for (const LayerCost& l : *shared_layers) weights.push_back(l.params);
      else
        weights = layer_times(*shared_layers, shared_cluster->device(0), *model_options);
      partition = partition_min_max(weights, stages);
    }
    if (!partition) throw CliError(partition.error().message);
    std::vector<int> placement;
    for (int k = 0; k < stages; ++k)  // chunk c of device d is stage c*p + d (or 2p-1-d in a V)
      placement.push_back(v_shape && k >= p ? 2 * p - 1 - k : k % p);
    StageCosts costs = stage_costs(*shared_layers, partition.value(), placement, *shared_cluster, *model_options);
    costs.max_mem.resize(p);
    if (limit > 0) costs.max_mem.assign(p, limit);
    return std::pair{costs, partition.value()};
  };
  return source;
}

StageSource file_source(const PipelineArgs& args) {
  auto text = read_text_file(args.stages_file);
  if (!text) throw CliError(text.error().message);
  auto parsed = read_stage_costs_json(text.value(), args.stages_file);
  if (!parsed) throw CliError(parsed.error().message);
  auto [costs, micro] = parsed.value();
  if (!args.mem_limit.empty()) costs.max_mem.assign(costs.num_stages(), parse_bytes(args.mem_limit));
  StageSource source;
  source.devices = costs.num_stages();
  source.microbatches = args.microbatches > 0 ? args.microbatches : micro;
  source.tokens_per_microbatch = 0;
  source.description = std::to_string(costs.num_stages()) + " stages from " + args.stages_file;
  source.costs = [costs](int v, bool v_shape) {
    StageCosts split = v == 1 ? costs : split_into_chunks(costs, v);
    if (v_shape)  // chunk 1 of device d is stage 2p-1-d: reverse the second half
      for (auto* list : {&split.f, &split.b, &split.w, &split.mem_f, &split.mem_b, &split.mem_w, &split.static_memory, &split.flops})
        std::reverse(list->begin() + costs.num_stages(), list->end());
    return std::pair{split, Partition{}};
  };
  return source;
}

StageSource load_source(const PipelineArgs& args) {
  const int given = !args.stages_file.empty() + !args.model.empty() + !args.hf_config.empty();
  if (given != 1) throw CliError("give exactly one of --model NAME (see `gantry models`), --hf-config FILE or --stages FILE");
  return args.stages_file.empty() ? model_source(args) : file_source(args);
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
  const StageSource source = load_source(args);
  std::vector<std::pair<std::string, PipelineResult>> results;
  std::vector<PipelineScheme> simulated;
  for (const std::string& name : names) {
    Run run = build(name, source);
    if (!args.scheme_file.empty()) {  // a given scheme replaces the built one (same stage costs)
      auto text = read_text_file(args.scheme_file);
      if (!text) throw CliError(text.error().message);
      auto given = scheme_from_json(text.value(), args.scheme_file);
      if (!given) throw CliError(given.error().message);
      if (given.value().num_stages() != run.costs.num_stages())
        throw CliError(args.scheme_file + ": the scheme has " + std::to_string(given.value().num_stages()) +
                       " stages but the costs give " + std::to_string(run.costs.num_stages()));
      run.scheme = std::move(given).value();
      run.name = args.scheme_file;
    }
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
      labels.title = "pipeline " + name + ": " + source.description + ", " + std::to_string(source.microbatches) + " microbatches";
      for (int d = 0; d < run.scheme.num_devices(); ++d) labels.device_names.push_back("device " + std::to_string(d));
      labels.group_names = {"F", "B", "W", "BW"};
      for (const PipeTask& t : r.value().compiled.task_of) labels.group_of.push_back(static_cast<int>(t.op));
      write_timeline_files(args.out, r.value().compiled.graph, r.value().sim, labels);
    }
    results.emplace_back(run.name, std::move(r).value());
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

}  // namespace

void add_pipeline_command(CLI::App& app) {
  CLI::App* pipeline = app.add_subcommand("pipeline", "simulate and compare pipeline-parallel schemes");
  pipeline->require_subcommand(1);
  auto sim_args = std::make_shared<PipelineArgs>();
  CLI::App* sim = pipeline->add_subcommand("simulate", "simulate one schedule: iteration time, bubbles, memory, overlap");
  add_common(*sim, *sim_args);
  sim->add_option("--schedule", sim_args->schedule, "gpipe, 1f1b, interleaved[:v], zb or zbv")->capture_default_str();
  sim->add_option("--scheme", sim_args->scheme_file, "simulate this scheme JSON instead (see docs/formats.md)");
  sim->add_option("--save-scheme", sim_args->save_scheme, "write the simulated scheme as JSON");
  sim_args->out.add_to(*sim);
  sim->callback([sim_args] { run_one(*sim_args, {sim_args->schedule}); });
  auto cmp_args = std::make_shared<PipelineArgs>();
  CLI::App* cmp = pipeline->add_subcommand("compare", "every baseline schedule side by side");
  add_common(*cmp, *cmp_args);
  cmp->add_option("--schedules", cmp_args->schedules, "schedules to compare")->capture_default_str();
  cmp_args->out.add_to(*cmp, false);
  cmp->callback([cmp_args] { run_one(*cmp_args, cmp_args->schedules); });
}

}  // namespace gantry::cli
