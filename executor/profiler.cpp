#include "executor/profiler.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "executor/co_run.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/profile_samples.hpp"
#include "workloads/workload.hpp"

namespace gantry {

namespace {

// Every op on the first device of each kind (its solo times, against which the other placements'
// co-run slowdown is fitted), round-robin, and `random` random placements.
std::vector<Placement> placements_for(const Graph& graph, const Cluster& cluster, int random, std::uint64_t seed) {
  std::vector<Placement> out;
  const auto n = static_cast<std::size_t>(graph.size());
  const int devices = cluster.size();
  std::set<std::string> kinds;
  for (int d = 0; d < devices; ++d)
    if (kinds.insert(cluster.device(d).kind).second) out.push_back({std::vector<std::int32_t>(n, d), {}});
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

// Per ordered device pair (from, to): every source on `from`, every other op on `to`. On the link
// ladder each edge is then a transfer from -> to.
std::vector<Placement> pair_placements(const Graph& graph, int devices) {
  std::vector<Placement> out;
  for (int from = 0; from < devices; ++from)
    for (int to = 0; to < devices; ++to) {
      if (from == to) continue;
      Placement p;
      for (OpId op = 0; op < graph.size(); ++op) p.device.push_back(graph.in_edges(op).empty() ? from : to);
      out.push_back(std::move(p));
    }
  return out;
}

struct PlannedGraph {
  std::string name;
  const Graph* graph;
  std::vector<Placement> placements;
};

struct MeasuredRun {
  const PlannedGraph* plan;
  RunRecord run;
};

// Per device kind, the co-run slowdown its runs show (executor/co_run.hpp).
std::map<std::string, double> fit_slowdowns(const Cluster& cluster, const std::vector<MeasuredRun>& measured) {
  std::vector<CoRunSample> samples;
  for (const MeasuredRun& m : measured) add_co_run_samples(*m.plan->graph, cluster, m.run, &samples);
  return fit_co_run_slowdowns(samples);
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
  std::vector<PlannedGraph> plans;
  for (std::size_t i = 0; i < graphs.size(); ++i)
    plans.push_back({graphs[i].first, &graphs[i].second,
                     placements_for(graphs[i].second, cluster, options.random_placements, options.seed + i)});
  Graph ladder;
  if (!options.link_ladder.empty() && cluster.size() > 1) {
    auto built = make_workload(options.link_ladder);
    if (!built) return make_error("the link ladder: " + built.error().message);
    ladder = std::move(built).value();
    plans.push_back({options.link_ladder, &ladder, pair_placements(ladder, cluster.size())});
  }
  int total = 0;
  for (const PlannedGraph& plan : plans) total += static_cast<int>(plan.placements.size());
  // Rounds of one run per (graph, placement), as the fidelity benchmark measures: a burst of
  // interference then slows one run of many. Each run's per-signature means are kept apart, and a
  // run more than 1.5 times its signature's median over the rounds (a burst) is left out.
  const int rounds = std::max(1, options.exec.repeats);
  total *= rounds;
  std::vector<MeasuredRun> measured;
  int done = 0;
  for (int round = 0; round < rounds; ++round)
    for (const PlannedGraph& plan : plans)
      for (const Placement& placement : plan.placements) {
        ExecOptions exec = options.exec;
        exec.repeats = 1;
        exec.warmup = round == 0 ? std::max(1, options.exec.warmup) : 0;
        auto m = options.execute ? options.execute(*plan.graph, placement, cluster, exec)
                                 : execute_on_cpu(*plan.graph, placement, cluster, exec);
        if (!m) return make_error(plan.name + ": " + m.error().message);
        measured.push_back({&plan, std::move(m.value().median_run)});
        if (options.progress) options.progress(plan.name, ++done, total);
      }
  // Op times are kept as solo times, with each kind's slowdown per busy neighbour filed apart.
  ProfileTable samples;
  for (const auto& [kind, slowdown] : fit_slowdowns(cluster, measured)) samples.add_co_run_slowdown(kind, slowdown);
  const std::vector<double> slowdown_of_device = co_run_slowdowns(cluster, &samples);
  std::map<std::pair<std::string, std::string>, std::vector<ProfileEntry>> runs;
  for (const MeasuredRun& m : measured) {
    ProfileTable run;
    add_profile_samples(*m.plan->graph, cluster, m.run, &run, slowdown_of_device);
    for (ProfileEntry& e : run.entries()) runs[{e.device_kind, e.op.signature}].push_back(std::move(e));
  }
  for (auto& [key, entries] : runs) {
    std::vector<double> means;
    for (const ProfileEntry& e : entries) means.push_back(e.seconds.mean);
    // The lower median: of two runs, a burst's is the higher one, and it must not set the bar.
    const std::size_t middle = (means.size() - 1) / 2;
    std::nth_element(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(middle), means.end());
    const double median = means[middle];
    for (const ProfileEntry& e : entries)
      if (e.seconds.mean <= 1.5 * median) samples.merge(e);
  }
  return samples;
}

}  // namespace gantry
