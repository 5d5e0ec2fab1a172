#include "workloads/pipeline_stages.hpp"

#include <memory>
#include <tuple>

namespace gantry {

namespace {

double seconds(double flops, LayerType type, const Device& device, const PipelineModelOptions& options) {
  return flops / (device.peak_flops * options.efficiency[static_cast<int>(type)]);
}

// F, B, W seconds of layer i: measured when a profile gave them, else from its FLOPs.
std::array<double, 3> fbw(const std::vector<LayerCost>& layers, int i, const Device& device,
                          const PipelineModelOptions& options) {
  if (!options.measured.empty()) {
    std::array<double, 3> t = options.measured[i];
    if (device.kind != options.measured_kind && options.measured_peak_flops > 0 && device.peak_flops > 0)
      for (double& part : t) part *= options.measured_peak_flops / device.peak_flops;
    return t;
  }
  const LayerCost& l = layers[i];
  return {seconds(l.forward_flops, l.type, device, options), seconds(l.input_grad_flops, l.type, device, options),
          seconds(l.weight_grad_flops, l.type, device, options)};
}

}  // namespace

std::vector<double> layer_times(const std::vector<LayerCost>& layers, const Device& device,
                                const PipelineModelOptions& options) {
  std::vector<double> out;
  for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
    const auto t = fbw(layers, i, device, options);
    out.push_back(t[0] + t[1] + t[2]);
  }
  return out;
}

StageCosts stage_costs(const std::vector<LayerCost>& layers, const std::vector<std::pair<int, int>>& partition,
                       const std::vector<int>& placement, const Cluster& cluster, const PipelineModelOptions& options) {
  StageCosts c;
  const int stages = static_cast<int>(partition.size());
  for (int s = 0; s < stages; ++s) {
    const Device& device = cluster.device(placement[s]);
    double f = 0, b = 0, w = 0, act = 0, held = 0, wgrad = 0, params = 0, flops = 0;
    for (int i = partition[s].first; i < partition[s].second; ++i) {
      const LayerCost& l = layers[i];
      const auto t = fbw(layers, i, device, options);
      f += t[0];
      b += t[1];
      w += t[2];
      act += l.activation_bytes;
      held += l.held_after_b_bytes;
      wgrad += l.w_grad_bytes;
      params += l.params;
      flops += l.forward_flops + l.input_grad_flops + l.weight_grad_flops;
    }
    c.f.push_back(f);
    c.b.push_back(b);
    c.w.push_back(w);
    // B frees what only it needed and creates the output gradients W reads; W frees the rest.
    c.mem_f.push_back(act);
    c.mem_b.push_back(-(act - held) + wgrad);
    c.mem_w.push_back(-(held + wgrad));
    c.static_memory.push_back(params * options.bytes_per_param);
    c.flops.push_back(flops);
    // What recomputation keeps: the activation handed in by the previous stage (none at the first,
    // whose input, token ids, is negligible).
    c.input_bytes.push_back(partition[s].first > 0 ? layers[partition[s].first - 1].output_bytes : 0.0);
    c.w_grad_bytes.push_back(wgrad);
    // The activation handed to the next stage, over the link between the two devices.
    double comm = 0;
    if (s + 1 < stages) {
      const Link& link = cluster.link(placement[s], placement[s + 1]);
      const double bytes = layers[partition[s].second - 1].output_bytes;
      if (placement[s] != placement[s + 1] && link.bandwidth > 0) comm = link.latency + bytes / link.bandwidth;
    }
    c.comm.push_back(comm);
    c.host_bandwidth.push_back(device.host_bandwidth);
  }
  for (const Device& d : cluster.devices()) c.max_mem.push_back(d.memory);
  return c;
}

std::vector<double> layer_params(const std::vector<LayerCost>& layers) {
  std::vector<double> out;
  for (const LayerCost& l : layers) out.push_back(l.params);
  return out;
}

std::function<StageCosts(const std::vector<std::pair<int, int>>&, const std::vector<int>&)> stage_cost_function(
    std::vector<LayerCost> layers, Cluster cluster, PipelineModelOptions options) {
  auto shared = std::make_shared<const std::tuple<std::vector<LayerCost>, Cluster, PipelineModelOptions>>(
      std::move(layers), std::move(cluster), std::move(options));
  return [shared](const std::vector<std::pair<int, int>>& partition, const std::vector<int>& placement) {
    return stage_costs(std::get<0>(*shared), partition, placement, std::get<1>(*shared), std::get<2>(*shared));
  };
}

}  // namespace gantry
