#pragma once
// Devices that share a host slow each other down: CPU cores share caches, memory bandwidth and
// clocks, partitions of one GPU share its memory system. The profiles keep solo op times and one
// slowdown factor per device kind (core/profile_table.hpp, co_run_slowdown), which the simulator
// applies once per busy neighbour to an op that starts beside busy devices. This file measures that
// from executor runs: how many other devices' ops ran beside each op, and the factor that best
// explains the same op's times measured alone and beside others.
#include <map>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/profile_table.hpp"
#include "executor/measurement.hpp"

namespace gantry {

// Per op of `run` (by op id): how many other devices of its host ran an op beside it, on average
// over its duration (each device's share of it, summed: in [0, 1] on a host of two devices, up to
// D - 1 on one of D, as a GPU's D partitions).
std::vector<double> co_run_shares(const RunRecord& run, const Cluster& cluster);

// Per device of `cluster`: its kind's slowdown in `profiles` (1 everywhere without profiles).
std::vector<double> co_run_slowdowns(const Cluster& cluster, const ProfileTable* profiles);

// An op's measured time as the time it would take alone: seconds / (1 + (slowdown - 1) x share),
// the slowdown counted once per busy neighbour (the simulator's rule).
double solo_seconds(double seconds, double share, double slowdown);

struct CoRunSample {
  std::string kind, signature;  // device kind, op signature
  double seconds = 0, share = 0;
};

// `run`'s ops as samples: each op's time on its device's kind, with its co-run share.
void add_co_run_samples(const Graph& graph, const Cluster& cluster, const RunRecord& run,
                        std::vector<CoRunSample>* samples);

// Per device kind, the factor s in [1, 4] that best explains its samples as solo time x
// (1 + (s - 1) x share), one solo time per signature (least squares in log time). A kind is left
// out when none of its signatures was measured both mostly alone (share < 1/4) and mostly beside
// at least one other device (share > 3/4): its samples cannot tell the factor from the solo times.
std::map<std::string, double> fit_co_run_slowdowns(const std::vector<CoRunSample>& samples);

}  // namespace gantry
