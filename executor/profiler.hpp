#pragma once
// Profiling a cluster: every graph runs under several placements that spread it over every device
// (round-robin and random ones), so that ops are timed while the other devices work too, as in
// real runs (cores share caches and memory bandwidth: an op timed alone on an idle machine runs
// faster than in a run), in exec.repeats interleaved rounds; every op and transfer time becomes a
// profile sample (executor/profile_samples.hpp) except runs that a burst of interference slowed.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "core/profile_table.hpp"
#include "core/result.hpp"
#include "executor/measurement.hpp"

namespace gantry {

struct ProfilerOptions {
  int random_placements = 3;
  // The workload run once per ordered device pair, its sources on one device and the rest on the
  // other, so that every link is timed over a wide range of sizes (empty: none).
  std::string link_ladder = "link-ladder";
  ExecOptions exec;  // repeats (rounds), warm-up, pinning
  std::uint64_t seed = 1;
  // What runs a placement: this process's CPU backend when empty, or another executor (a
  // gantry-exec program on the GPUs, executor/external_executor.hpp).
  using Execute = std::function<Result<Measurement>(const Graph&, const Placement&, const Cluster&, const ExecOptions&)>;
  Execute execute;
  std::function<void(const std::string& graph, int done, int total)> progress;
};

// The workloads `gantry profile` measures by default on CPU devices: the generators' op families
// over a grid of sizes (block GEMMs from 64 to 1024 on a side, transformer blocks of widths 256 to
// 768, proxy GEMMs from 1e6 to 1e9 flops). Not the op-grid sweep: its GEMMs, timed among
// independent ops, run 5-8% faster than the same shapes inside real graphs, and profiles with it
// predicted measured makespans worse (docs/architecture.md, "Profiles").
std::vector<std::string> default_profile_workloads();

Result<ProfileTable> profile_cluster(const Cluster& cluster, const std::vector<std::pair<std::string, Graph>>& graphs,
                                     const ProfilerOptions& options);

}  // namespace gantry
