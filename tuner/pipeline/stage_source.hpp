#pragma once
// Where a pipeline's per-stage costs come from, and building or loading a scheme with them.
// A stage file gives one stage per device, spread evenly over the virtual stages a schedule puts
// on each device; a model is partitioned into devices x chunks stages of consecutive layers.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/pipeline_scheme.hpp"
#include "core/result.hpp"
#include "tuner/pipeline/partition.hpp"
#include "tuner/pipeline/schedule_registry.hpp"

namespace gantry {

struct StageSet {
  StageCosts costs;
  Partition partition;         // empty for per-stage costs
  std::vector<int> placement;  // stage -> device
};

class StageSource {
 public:
  virtual ~StageSource() = default;
  virtual int devices() const = 0;
  // Costs of devices() x layout.chunks virtual stages in the layout's placement.
  virtual Result<StageSet> stages(const StageLayout& layout) const = 0;
  // Costs of a scheme's own partition and placement; errors name `source` (the scheme file) and
  // the field that does not fit.
  virtual Result<StageCosts> costs_of(const PipelineScheme& scheme, const std::string& source) const = 0;
};

// Per-device costs (entry d: the whole work of device d; comm[d]: the hop between devices d and
// d+1) spread over the virtual stages `placement` puts on each device: a device's F, B, W, memory
// and FLOPs divided evenly among its stages. The hop from stage k to k+1 is free on one device,
// comm[min] between neighbouring devices, and the largest neighbour hop between any other two
// (the last device back to the first in interleaved schedules).
StageCosts spread_over_devices(const StageCosts& per_device, const std::vector<int>& placement);

// Per-stage costs from a file (already checked); max_mem replaced by `mem_limit` when > 0.
std::unique_ptr<StageSource> stage_file_source(StageCosts per_device, double mem_limit = 0);

enum class PartitionMethod { uniform, params, compute };
Result<PartitionMethod> parse_partition_method(const std::string& name);

// What a model-based source needs to know about the model's layers.
struct LayerModel {
  std::vector<double> params;  // per layer (parameter-balanced partitions)
  // Per pipeline device, per layer F+B+W seconds on that device (compute-balanced partitions
  // weigh each stage's layers on the device it is placed on).
  std::vector<std::vector<double>> time;
  // Costs of stages [first, end) of layers on devices placement[s] (memory limit: the devices').
  std::function<StageCosts(const Partition& partition, const std::vector<int>& placement)> stage_costs;
};
// `devices` pipeline stages (x chunks), max_mem replaced by `mem_limit` when > 0.
std::unique_ptr<StageSource> model_stage_source(LayerModel model, int devices, PartitionMethod method,
                                                double mem_limit = 0);

// Costs of every one of `layers` layers as a stage of its own, all on `device` (what a layer costs
// there: per-layer bounds and partitions).
Result<StageCosts> per_layer_costs(const StageSource& source, int layers, int device);
// Per device, per layer: F + B + W seconds of the layer there (the bounds' work).
Result<std::vector<std::vector<double>>> per_layer_times(const StageSource& source, int layers);

struct PipelineRun {
  PipelineScheme scheme;
  StageCosts costs;
};

// The schedule `spec` (see ScheduleRegistry::find) with `microbatches`; `microbatches_input`
// names where the count came from (a flag or a file field) in size errors.
Result<PipelineRun> build_pipeline(const std::string& spec, const StageSource& source, int microbatches,
                                   const std::string& microbatches_input,
                                   const ScheduleRegistry& registry = schedule_registry());
// A scheme read from `source` (a file) with the costs of its own partition and placement.
Result<PipelineRun> load_pipeline(PipelineScheme scheme, const StageSource& stages, const std::string& source);

}  // namespace gantry
