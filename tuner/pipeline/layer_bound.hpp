#pragma once
// How fast any pipeline of whole layers can be, whatever its schedule: the busiest device runs at
// least its layers' work. Layers do not divide, and a device holding a few stages holds a few runs
// of consecutive layers, so when layer types alternate (Mamba and MLP layers in Nemotron-H) the
// busiest device's share lies above work / devices by more than any layers-per-device argument
// shows: the tuning target that asks for less is out of reach (docs/architecture.md, Pipelines).
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
