#pragma once
// A problem as content: for placement, the graph (gantry JSON), the cluster (YAML) and the
// simulator options (JSON); for pipeline tuning, a pipeline problem (actors/pipeline_problem.hpp)
// instead. This is what crosses processes; each process rebuilds Graph, Cluster and CostTable (or
// the pipeline's stage costs) from it once and caches the result under the content's fingerprint.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/fingerprint.hpp"
#include "core/graph.hpp"
#include "actors/pipeline_problem.hpp"
#include "core/result.hpp"
#include "sim/sim_options.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

struct ProblemSpec {
  std::string graph_json;
  std::string cluster_yaml;
  std::string sim_json;     // sim_options_json()
  std::string graph_label;  // shown in listings; not part of the key
  // A pipeline problem's JSON (pipeline_problem_json) instead of graph, cluster and simulator.
  std::string pipeline_json;
  bool is_pipeline() const { return !pipeline_json.empty(); }
  // Measured profiles the problem is costed with (profiles_to_json), or empty for the roofline.
  std::string profiles_json;
};

// The key of a problem's content (graph, cluster, simulator options; not the label).
Fingerprint problem_key(const ProblemSpec& spec);

ProblemSpec make_problem_spec(const Graph& graph, const Cluster& cluster, const SimOptions& sim,
                              const std::string& graph_label, const std::string& graph_json = "",
                              const ProfileTable* profiles = nullptr);

struct BuiltProblem {
  Fingerprint key;
  ProblemSpec spec;
  Graph graph;
  Cluster cluster;
  std::unique_ptr<CostTable> costs;
  SimOptions sim;
  // The key its bests are stored under: the cluster under the runtime model, and the profiles'
  // fingerprint when it is costed with measured profiles.
  Fingerprint runtime;
  // A pipeline problem's stage costs (the graph is then empty and `costs` null).
  std::unique_ptr<PipelineSource> pipeline;
  PlacementProblem placement() const { return PlacementProblem{graph, cluster, *costs, sim}; }
};

// Parses and checks the content; the error names the part that is wrong.
Result<std::shared_ptr<const BuiltProblem>> build_problem(const ProblemSpec& spec);

// Built problems by key, the most recently used kept (a worker serves few problems at a time; a
// cost table of a large graph is tens of megabytes). Thread-safe.
class ProblemCache {
 public:
  explicit ProblemCache(std::size_t capacity = 8) : capacity_(capacity) {}
  std::shared_ptr<const BuiltProblem> find(const Fingerprint& key);
  Result<std::shared_ptr<const BuiltProblem>> build(const ProblemSpec& spec);  // builds once per key
  void insert(std::shared_ptr<const BuiltProblem> problem);

 private:
  struct Entry {
    std::shared_ptr<const BuiltProblem> problem;
    std::uint64_t used = 0;
  };
  std::size_t capacity_;
  std::uint64_t clock_ = 0;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Entry> entries_;
  std::mutex mutex_;
};

}  // namespace gantry
