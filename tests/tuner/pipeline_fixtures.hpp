#pragma once
// Stage costs the pipeline tests build their closed forms on.
#include <functional>
#include <memory>
#include <vector>

#include "core/pipeline_scheme.hpp"
#include "tuner/pipeline/stage_source.hpp"

namespace gantry::testing {

// p identical stages: F, B, W per microbatch, activation `act` allocated by F, `held` kept from
// B to W, no transfer time unless given.
inline StageCosts uniform_stages(int p, double f, double b, double w, double comm = 0, double act = 10, double held = 2) {
  StageCosts c;
  for (int s = 0; s < p; ++s) {
    c.f.push_back(f);
    c.b.push_back(b);
    c.w.push_back(w);
    c.comm.push_back(comm);
    c.mem_f.push_back(act);
    c.mem_b.push_back(-(act - held));
    c.mem_w.push_back(-held);
    c.static_memory.push_back(0);
    c.flops.push_back(0);
  }
  return c;
}

struct LayerSourceOptions {
  double comm = 0;     // every hand-off between devices
  double act = 1;      // activation per layer, allocated by F
  double held = 0;     // share of it kept from B to W
  double max_mem = 0;  // per device (0: none)
  PartitionMethod method = PartitionMethod::uniform;
  double input = -1;   // >= 0: each stage's input (what recomputation keeps); < 0: no recomputation
  double params = 0;   // static memory per layer (parameters, gradients, optimizer state)
  std::vector<double> slowdown;    // per device: its layer times are time[i] x this (empty: 1)
  std::vector<double> device_mem;  // per device, instead of max_mem when given (0: none)
  double host = 0;     // every device's host link, per unit of time (0: none, no offload)
  std::vector<double> device_host;  // per device, instead of host when given
};

// A model of layers with F = B = W = time[i] (on identical devices unless `slowdown` says
// otherwise); a stage sums its layers.
inline std::unique_ptr<StageSource> layer_source(std::vector<double> time, int devices, LayerSourceOptions o = {}) {
  LayerModel model;
  model.params.assign(time.size(), 1.0);
  if (o.slowdown.empty()) o.slowdown.assign(devices, 1.0);
  for (int d = 0; d < devices; ++d) {
    model.time.emplace_back();
    for (double t : time) model.time.back().push_back(3 * t * o.slowdown[d]);
  }
  model.stage_costs = [time, devices, o](const Partition& partition, const std::vector<int>& placement) {
    StageCosts c;
    for (std::size_t s = 0; s < partition.size(); ++s) {
      const auto [first, end] = partition[s];
      double t = 0;
      for (int i = first; i < end; ++i) t += time[i] * o.slowdown[placement[s]];
      const double a = o.act * (end - first);
      c.f.push_back(t);
      c.b.push_back(t);
      c.w.push_back(t);
      c.comm.push_back(o.comm);
      c.mem_f.push_back(a);
      c.mem_b.push_back(-(1 - o.held) * a);
      c.mem_w.push_back(-o.held * a);
      c.static_memory.push_back(o.params * (end - first));
      c.flops.push_back(0);
      c.host_bandwidth.push_back(o.device_host.empty() ? o.host : o.device_host[placement[s]]);
      if (o.input >= 0) {
        c.input_bytes.push_back(o.input);
        c.w_grad_bytes.push_back(0);
      }
    }
    c.max_mem = o.device_mem.empty() ? std::vector<double>(devices, o.max_mem) : o.device_mem;
    return c;
  };
  return model_stage_source(std::move(model), devices, o.method);
}

// 4 devices, one layer each (F = B = W = 1), activation 1 per microbatch, limit 2.5: memory binds
// on the first devices (1F1B wants p - d microbatches in flight on device d). `host`: every
// device's host link (0: none); `input` >= 0: recomputation keeps that much.
inline std::unique_ptr<StageSource> tight_four_layers(double host, double input = -1) {
  LayerSourceOptions o;
  o.max_mem = 2.5;
  o.host = host;
  o.input = input;
  return layer_source({1, 1, 1, 1}, 4, o);
}

// Calls `visit` with every partition of `layers` layers into `stages` non-empty consecutive ranges.
inline void for_each_partition(int layers, int stages, const std::function<void(const Partition&)>& visit) {
  Partition p;
  std::function<void(int)> extend = [&](int first) {
    if (static_cast<int>(p.size()) == stages - 1) {
      p.emplace_back(first, layers);
      visit(p);
      p.pop_back();
      return;
    }
    for (int end = first + 1; end <= layers - (stages - 1 - static_cast<int>(p.size())); ++end) {
      p.emplace_back(first, end);
      extend(end);
      p.pop_back();
    }
  };
  extend(0);
}

}  // namespace gantry::testing
