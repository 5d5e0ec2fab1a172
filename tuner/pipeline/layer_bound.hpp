#pragma once
// How fast any pipeline of whole layers can be, whatever its schedule: the busiest device runs at
// least its layers' work. Layers do not divide, and a device holding a few stages holds a few runs
// of consecutive layers, so the busiest device's share lies above work / devices, by how much
// depends on which layers can go together: nemotron-h-8b alternates Mamba (7.04 ms per
// microbatch) and MLP (7.30 ms) layers, so on 8 devices with at most 4 stages each one device
// runs 7 of its 48 such layers in at most 4 runs, at least 5 Mamba and 2 MLP: 49.78 ms, 1.593 s
// for 32 microbatches, against 1.525 s for work / devices and 1.5765 s for any layers per device.
#include <vector>

namespace gantry {

// A lower bound on the busiest device's time when layers of times `layer_times` (in model order)
// run whole on `devices` devices, each device holding at most `max_runs` runs of consecutive
// layers (0: any number; a device's stages are such runs, or fewer when neighbours share one).
// The largest of work / devices and, for every layer time w, the cheapest set of at most
// `max_runs` runs holding ceil(n_w / devices) of the n_w layers of time w or more (some device
// holds that many of them).
double whole_layer_bound(const std::vector<double>& layer_times, int devices, int max_runs = 0);

}  // namespace gantry
