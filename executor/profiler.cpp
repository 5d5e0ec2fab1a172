#include "executor/profiler.hpp"

#include <random>

#include "executor/cpu/cpu_executor.hpp"
#include "executor/profile_samples.hpp"

namespace gantry {

namespace {

std::vector<Placement> placements_for(const Graph& graph, int devices, int random, std::uint64_t seed) {
  std::vector<Placement> out;
  const auto n = static_cast<std::size_t>(graph.size());
  if (devices == 1) out.push_back({std::vector<std::int32_t>(n, 0), {}});
  if (devices > 1) {
    Placement round_robin;
    for (std::size_t op = 0; op < n; ++op) round_robin.device.push_back(static_cast<std::int32_t>(op % devices));
    out.push_back(round_robin);
  }
  std::mt19937_64 rng(seed);
  for (int k = 0; k < random && devices > 1; ++k) {
    Placement p;
    for (std::size_t op = 0; op < n; ++op) p.device.push_back(static_cast<std::int32_t>(rng() % devices));
    out.push_back(p);
  }
  return out;
}

}  // namespace

std::vector<std::string> default_profile_workloads() {
  return {
      "chainmm:blocks=2,size=256",   "chainmm:blocks=2,size=512",   "chainmm:blocks=2,size=1024",
      "chainmm:blocks=4,size=2048",  "ffnn:layers=2,blocks=2,batch=256,hidden=256",
      "ffnn:layers=2,blocks=3,batch=768,hidden=768", "ffnn:layers=2,blocks=2,batch=2048,hidden=1536",
      "llama-block:blocks=2,seq=128,hidden=256,heads=4,ffn=688,dtype_bytes=4",
      "llama-block:blocks=4,seq=512,hidden=512,heads=8,ffn=1376,dtype_bytes=4",
      "llama-block:blocks=3,seq=384,hidden=768,heads=12,ffn=2064,dtype_bytes=4,fused_attention=0",
      "llama-layer:blocks=2,seq=128,hidden=256,heads=4,ffn=688,vocab=4000,dtype_bytes=4",
      "random:ops=60,flops=1e6",     "random:ops=60,flops=3e7",     "random:ops=40,flops=1e9",
  };
}

Result<ProfileTable> profile_cluster(const Cluster& cluster, const std::vector<std::pair<std::string, Graph>>& graphs,
                                     const ProfilerOptions& options) {
  ProfileTable samples;
  int done = 0, total = 0;
  std::vector<std::vector<Placement>> plans;
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    plans.push_back(placements_for(graphs[i].second, cluster.size(), options.random_placements, options.seed + i));
    total += static_cast<int>(plans.back().size());
  }
  for (std::size_t i = 0; i < graphs.size(); ++i)
    for (const Placement& placement : plans[i]) {
      auto m = execute_on_cpu(graphs[i].second, placement, cluster, options.exec);
      if (!m) return make_error(graphs[i].first + ": " + m.error().message);
      add_profile_samples(graphs[i].second, cluster, m.value().median_run, &samples);
      if (options.progress) options.progress(graphs[i].first, ++done, total);
    }
  return samples;
}

}  // namespace gantry
