#pragma once
// From a model's layers to the per-stage numbers a pipeline is simulated with: stage times on the
// cluster's devices (FLOPs / (peak x efficiency of the layer type)), the point-to-point time of
// the activation a stage hands to the next, activation memory deltas of F / B / W, and the static
// memory of the stage's parameters with their gradients and optimizer state.
#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.hpp"
#include "core/pipeline_scheme.hpp"
#include "workloads/model_catalog.hpp"

namespace gantry {

struct PipelineModelOptions {
  // Achieved fraction of peak FLOP/s per layer type (embedding, attention, mamba1, mamba2, mlp,
  // moe, logits).
  std::array<double, 7> efficiency = {0.30, 0.45, 0.35, 0.40, 0.60, 0.45, 0.55};
  double bytes_per_param = 18;  // bf16 weights, fp32 gradients, fp32 master weights and Adam moments
  std::vector<std::array<double, 3>> measured;  // per layer F, B, W seconds from a profile (empty: FLOPs)
  // The device kind the profile was measured on and its peak: on a device of another kind the
  // measured times scale by the ratio of peaks (a profile of each kind would be better).
  std::string measured_kind;
  double measured_peak_flops = 0;
};

// F+B+W time of every layer on `device` (the weights of a compute-balanced partition).
std::vector<double> layer_times(const std::vector<LayerCost>& layers, const Device& device,
                                const PipelineModelOptions& options = {});

// Stage s = layers [partition[s].first, partition[s].second) on device placement[s].
StageCosts stage_costs(const std::vector<LayerCost>& layers, const std::vector<std::pair<int, int>>& partition,
                       const std::vector<int>& placement, const Cluster& cluster,
                       const PipelineModelOptions& options = {});

// Parameters of every layer (the weights of a parameter-balanced partition).
std::vector<double> layer_params(const std::vector<LayerCost>& layers);

// stage_costs of `layers` on `cluster` as a function of (partition, placement), for the pipeline
// builders that choose partitions and placements themselves.
std::function<StageCosts(const std::vector<std::pair<int, int>>&, const std::vector<int>&)> stage_cost_function(
    std::vector<LayerCost> layers, Cluster cluster, PipelineModelOptions options = {});

}  // namespace gantry
