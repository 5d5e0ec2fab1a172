#include "actors/problem_spec.hpp"

#include "core/graph_io.hpp"
#include "sim/runtime_fingerprint.hpp"

namespace gantry {

Fingerprint problem_key(const ProblemSpec& spec) {
  Hasher h;
  h.add_string("gantry-problem-1");
  h.add_string(spec.graph_json);
  h.add_string(spec.cluster_yaml);
  h.add_string(spec.sim_json);
  if (spec.is_pipeline()) h.add_string(spec.pipeline_json);  // graph problems keep their keys
  if (!spec.profiles_json.empty()) h.add_string("profiles:" + spec.profiles_json);
  return h.finish();
}

ProblemSpec make_problem_spec(const Graph& graph, const Cluster& cluster, const SimOptions& sim,
                              const std::string& graph_label, const std::string& graph_json,
                              const ProfileTable* profiles) {
  ProblemSpec spec;
  if (profiles && !profiles->empty()) spec.profiles_json = profiles_to_json(*profiles);
  spec.graph_json = graph_json.empty() ? graph_to_json(graph, -1) : graph_json;
  spec.cluster_yaml = cluster.to_yaml();
  spec.sim_json = sim_options_json(sim);
  spec.graph_label = graph_label;
  return spec;
}

namespace {

Result<std::shared_ptr<const BuiltProblem>> build_pipeline_problem(const ProblemSpec& spec) {
  auto parsed = parse_pipeline_problem(spec.pipeline_json, "the job's pipeline problem");
  if (!parsed) return parsed.error();
  auto source = build_pipeline_source(parsed.value());
  if (!source) return make_error("the job's pipeline problem: " + source.error().message);
  auto problem = std::make_shared<BuiltProblem>();
  problem->key = problem_key(spec);
  problem->spec = spec;
  problem->pipeline = std::make_unique<PipelineSource>(std::move(source).value());
  return std::shared_ptr<const BuiltProblem>(std::move(problem));
}

}  // namespace

Result<std::shared_ptr<const BuiltProblem>> build_problem(const ProblemSpec& spec) {
  if (spec.is_pipeline()) return build_pipeline_problem(spec);
  auto problem = std::make_shared<BuiltProblem>();
  const std::string label = spec.graph_label.empty() ? "the job's graph" : "graph " + spec.graph_label;
  auto graph = read_graph_json(spec.graph_json, label);
  if (!graph) return graph.error();
  auto cluster = Cluster::from_yaml(spec.cluster_yaml, "the job's cluster");
  if (!cluster) return cluster.error();
  auto sim = sim_options_from_json(spec.sim_json);
  if (!sim) return make_error("the job's simulator options: " + sim.error().message);
  problem->key = problem_key(spec);
  problem->spec = spec;
  problem->graph = std::move(graph).value();
  problem->cluster = std::move(cluster).value();
  problem->sim = sim.value();
  if (spec.profiles_json.empty()) {
    problem->costs = std::make_unique<CostTable>(problem->graph, problem->cluster);
    problem->runtime = runtime_fingerprint(problem->cluster, problem->sim);
  } else {
    auto profiles = profiles_from_json(spec.profiles_json, "the job's profiles");
    if (!profiles) return profiles.error();
    problem->costs = std::make_unique<CostTable>(problem->graph, problem->cluster, &profiles.value());
    problem->runtime = runtime_fingerprint(problem->cluster, problem->sim, &profiles.value());
  }
  return std::shared_ptr<const BuiltProblem>(std::move(problem));
}

std::shared_ptr<const BuiltProblem> ProblemCache::find(const Fingerprint& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find({key.hi, key.lo});
  if (it == entries_.end()) return nullptr;
  it->second.used = ++clock_;
  return it->second.problem;
}

void ProblemCache::insert(std::shared_ptr<const BuiltProblem> problem) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::pair<std::uint64_t, std::uint64_t> key{problem->key.hi, problem->key.lo};
  entries_[key] = Entry{std::move(problem), ++clock_};
  while (entries_.size() > capacity_) {
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->second.used < oldest->second.used) oldest = it;
    entries_.erase(oldest);  // holders of the shared_ptr keep theirs alive
  }
}

Result<std::shared_ptr<const BuiltProblem>> ProblemCache::build(const ProblemSpec& spec) {
  if (auto found = find(problem_key(spec))) return found;
  auto built = build_problem(spec);
  if (built) insert(built.value());
  return built;
}

}  // namespace gantry
