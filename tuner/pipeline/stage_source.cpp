#include "tuner/pipeline/stage_source.hpp"

#include <algorithm>
#include <cstdlib>

namespace gantry {

namespace {

void apply_limit(StageCosts& costs, int devices, double mem_limit) {
  costs.max_mem.resize(devices);
  if (mem_limit > 0) costs.max_mem.assign(devices, mem_limit);
}

class FileSource final : public StageSource {
 public:
  explicit FileSource(StageCosts per_device) : costs_(std::move(per_device)) {}
  int devices() const override { return costs_.num_stages(); }

  Result<StageSet> stages(const StageLayout& layout) const override {
    std::vector<int> placement = stage_placement(devices(), layout);
    return StageSet{spread_over_devices(costs_, placement), Partition{}, std::move(placement)};
  }

  Result<StageCosts> costs_of(const PipelineScheme& scheme, const std::string& source) const override {
    if (!scheme.partition.empty())
      return make_error(source + ": partition: the scheme partitions a model's layers, but the stage costs (--stages) "
                        "have no layers; give the model instead");
    if (scheme.num_devices() != devices())
      return make_error(source + ": schedule: the scheme runs on " + std::to_string(scheme.num_devices()) +
                        " devices but the stage costs give " + std::to_string(devices()));
    if (!scheme.recompute.empty())
      return make_error(source + ": recompute: recomputation needs a model's activation and input sizes, which the "
                        "stage costs (--stages) do not give");
    if (!scheme.offload.empty())
      return make_error(source + ": offload: activation offload needs the devices' host bandwidth, which the stage "
                        "costs (--stages) do not give; give the model and cluster instead");
    // The file gives each device's work, which its stages share: a device without a stage would
    // drop its work from the iteration.
    std::vector<bool> holds(devices(), false);
    for (int d : scheme.placement)
      if (d >= 0 && d < devices()) holds[d] = true;
    for (int d = 0; d < devices(); ++d)
      if (!holds[d])
        return make_error(source + ": placement: no stage on device " + std::to_string(d) +
                          ", whose work the stage costs (--stages) give; every device needs at least one stage");
    return spread_over_devices(costs_, scheme.placement);
  }

 private:
  StageCosts costs_;
};

class ModelSource final : public StageSource {
 public:
  ModelSource(LayerModel model, int devices, PartitionMethod method, double mem_limit)
      : model_(std::move(model)), devices_(devices), method_(method), mem_limit_(mem_limit) {}
  int devices() const override { return devices_; }

  Result<StageSet> stages(const StageLayout& layout) const override {
    const int stages = devices_ * layout.chunks;
    const int layers = static_cast<int>(model_.params.size());
    std::vector<int> placement = stage_placement(devices_, layout);
    Result<Partition> partition = method_ == PartitionMethod::uniform ? partition_uniform(layers, stages)
                                  : method_ == PartitionMethod::params ? partition_min_max(model_.params, stages)
                                                                       : partition_min_max_per_stage(stage_times(placement));
    if (!partition) return partition.error();
    StageCosts costs = model_.stage_costs(partition.value(), placement);
    apply_limit(costs, devices_, mem_limit_);
    return StageSet{std::move(costs), std::move(partition).value(), std::move(placement)};
  }

  Result<StageCosts> costs_of(const PipelineScheme& scheme, const std::string& source) const override {
    auto ok = check_partition(scheme.partition, static_cast<int>(model_.params.size()), scheme.num_stages(), source);
    if (!ok) return ok.error();
    if (scheme.num_devices() != devices_)
      return make_error(source + ": schedule: the scheme runs on " + std::to_string(scheme.num_devices()) +
                        " devices but the pipeline degree is " + std::to_string(devices_));
    StageCosts costs = model_.stage_costs(scheme.partition, scheme.placement);
    apply_limit(costs, devices_, mem_limit_);
    for (int s : scheme.recompute)
      if (Status ok = recompute_stage(costs, s); !ok) return make_error(source + ": recompute: " + ok.error().message);
    std::vector<double> offload = scheme.offload;
    if (Status ok = normalize_offload(offload, scheme.num_stages(), source + ": offload"); !ok) return ok.error();
    for (std::size_t s = 0; s < offload.size(); ++s)
      if (offload[s] > 0)
        if (Status ok = offload_stage(costs, static_cast<int>(s), offload[s]); !ok)
          return make_error(source + ": offload: " + ok.error().message);
    return costs;
  }

 private:
  // Layer times on the device of each stage.
  std::vector<std::vector<double>> stage_times(const std::vector<int>& placement) const {
    std::vector<std::vector<double>> out;
    for (int device : placement) out.push_back(model_.time.at(device));
    return out;
  }

  LayerModel model_;
  int devices_;
  PartitionMethod method_;
  double mem_limit_;
};

}  // namespace

StageCosts spread_over_devices(const StageCosts& per_device, const std::vector<int>& placement) {
  const int devices = per_device.num_stages();
  std::vector<int> count(devices, 0);
  for (int d : placement) ++count[d];
  double far = 0;  // the largest hop between neighbouring devices
  for (int d = 0; d + 1 < devices; ++d) far = std::max(far, per_device.comm[d]);
  auto hop = [&](int a, int b) {
    if (a == b) return 0.0;
    if (std::abs(a - b) == 1) return per_device.comm[std::min(a, b)];
    return far;
  };
  StageCosts out;
  const int stages = static_cast<int>(placement.size());
  for (int k = 0; k < stages; ++k) {
    const int d = placement[k];
    const double n = count[d];
    out.f.push_back(per_device.f[d] / n);
    out.b.push_back(per_device.b[d] / n);
    out.w.push_back(per_device.w[d] / n);
    out.comm.push_back(k + 1 < stages ? hop(d, placement[k + 1]) : 0.0);
    out.mem_f.push_back(per_device.mem_f[d] / n);
    out.mem_b.push_back(per_device.mem_b[d] / n);
    out.mem_w.push_back(per_device.mem_w[d] / n);
    out.static_memory.push_back(per_device.static_memory[d] / n);
    out.flops.push_back(per_device.flops[d] / n);
  }
  out.max_mem = per_device.max_mem;
  return out;
}

std::unique_ptr<StageSource> stage_file_source(StageCosts per_device, double mem_limit) {
  if (mem_limit > 0) per_device.max_mem.assign(per_device.num_stages(), mem_limit);
  return std::make_unique<FileSource>(std::move(per_device));
}

Result<PartitionMethod> parse_partition_method(const std::string& name) {
  if (name == "uniform") return PartitionMethod::uniform;
  if (name == "params") return PartitionMethod::params;
  if (name == "compute") return PartitionMethod::compute;
  return make_error("unknown partition '" + name + "' (expected uniform, params, compute)");
}

std::unique_ptr<StageSource> model_stage_source(LayerModel model, int devices, PartitionMethod method, double mem_limit) {
  return std::make_unique<ModelSource>(std::move(model), devices, method, mem_limit);
}

Result<StageCosts> per_layer_costs(const StageSource& source, int layers, int device) {
  PipelineScheme one_per_stage;
  one_per_stage.num_microbatches = 1;
  one_per_stage.schedule.resize(source.devices());
  for (int i = 0; i < layers; ++i) one_per_stage.partition.emplace_back(i, i + 1);
  one_per_stage.placement.assign(layers, device);
  return source.costs_of(one_per_stage, "per-layer costs");
}

Result<std::vector<std::vector<double>>> per_layer_times(const StageSource& source, int layers) {
  std::vector<std::vector<double>> times(source.devices());
  for (int d = 0; d < source.devices(); ++d) {
    auto costs = per_layer_costs(source, layers, d);
    if (!costs) return costs.error();
    for (int i = 0; i < layers; ++i) times[d].push_back(costs.value().f[i] + costs.value().b[i] + costs.value().w[i]);
  }
  return times;
}

Result<PipelineRun> build_pipeline(const std::string& spec, const StageSource& source, int microbatches,
                                   const std::string& microbatches_input, const ScheduleRegistry& registry) {
  auto choice = registry.find(spec);
  if (!choice) return choice.error();
  const StageLayout layout = choice.value().layout;
  const std::int64_t stages = static_cast<std::int64_t>(source.devices()) * layout.chunks;
  auto size = check_pipeline_size(microbatches, stages, microbatches_input);
  if (!size) return size.error();
  auto set = source.stages(layout);
  if (!set) return set.error();
  auto scheme = choice.value().kind->build(source.devices(), microbatches, layout, set.value().costs);
  if (!scheme) return scheme.error();
  PipelineRun run{std::move(scheme).value(), std::move(set.value().costs)};
  if (run.scheme.placement != set.value().placement)
    return make_error("schedule '" + spec + "': its placement differs from its declared layout (internal error)");
  run.scheme.partition = std::move(set.value().partition);
  return run;
}

Result<PipelineRun> load_pipeline(PipelineScheme scheme, const StageSource& stages, const std::string& source) {
  auto costs = stages.costs_of(scheme, source);
  if (!costs) return costs.error();
  return PipelineRun{std::move(scheme), std::move(costs).value()};
}

}  // namespace gantry
