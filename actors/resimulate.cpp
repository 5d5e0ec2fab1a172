#include "actors/resimulate.hpp"

#include <optional>

#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/graph_io.hpp"
#include "core/profile_table.hpp"
#include "sim/model_version.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"

namespace gantry {

namespace {

// A stored cluster: YAML content, or (stores written before content was kept) the --cluster string.
Result<Cluster> stored_cluster(const std::string& text, const std::string& source) {
  if (text.find('\n') != std::string::npos) return Cluster::from_yaml(text, source);
  return Cluster::load(text);
}

Result<ResimulatedBest> resimulate_one(Store& store, const ScheduleRecord& r) {
  const std::string what = "best of graph " + r.graph.hex() + " (" + r.graph_label + ") on runtime " + r.cluster.hex();
  auto graph_text = store.graph(r.graph);
  if (!graph_text) return make_error(what + ": " + graph_text.error().message);
  if (!graph_text.value()) return make_error(what + ": the graph is not in the store");
  auto graph = read_graph_json(*graph_text.value(), "stored graph " + r.graph.hex());
  if (!graph) return make_error(what + ": " + graph.error().message);
  if (fingerprint(graph.value()) != r.graph)
    return make_error(what + ": the stored graph has fingerprint " + fingerprint(graph.value()).hex());

  auto cluster_text = store.cluster(r.cluster);
  if (!cluster_text) return make_error(what + ": " + cluster_text.error().message);
  if (!cluster_text.value()) return make_error(what + ": the cluster is not in the store");
  auto cluster = stored_cluster(*cluster_text.value(), "stored cluster " + r.cluster.hex());
  if (!cluster) return make_error(what + ": " + cluster.error().message);

  auto options = r.sim_options.empty() ? sim_options_from_name(r.sim) : sim_options_from_json(r.sim_options);
  if (!options) return make_error(what + ": " + options.error().message);
  // The stored cluster and options must give the record's own key under its version (with the
  // store's profiles, for a best tuned --profiled); a cluster stored as a file path whose file has
  // changed since does not, nor do profiles that have changed since.
  std::optional<ProfileTable> profiles;
  if (runtime_fingerprint(cluster.value(), options.value(), r.model_version) != r.cluster) {
    auto stored = store.profiles();
    if (!stored) return make_error(what + ": " + stored.error().message);
    if (stored.value().empty() || runtime_fingerprint(cluster.value(), options.value(), &stored.value(), r.model_version) != r.cluster)
      return make_error(what + ": the stored cluster '" + cluster.value().name() +
                        "' and simulator options do not give the record's key (the cluster file changed, or the "
                        "profiles it was costed with did?)");
    profiles = std::move(stored).value();
  }
  const ProfileTable* measured = profiles ? &*profiles : nullptr;
  auto fits = r.placement.check(graph.value(), cluster.value(), "stored placement");
  if (!fits) return make_error(what + ": " + fits.error().message);

  ResimulatedBest out;
  out.graph_label = r.graph_label;
  out.cluster_name = r.cluster_name;
  out.graph = r.graph;
  out.old_runtime = r.cluster;
  out.new_runtime = runtime_fingerprint(cluster.value(), options.value(), measured);
  out.old_version = r.model_version;
  out.old_makespan = r.makespan;
  // A second run, or a job of this version, already gave the new key a best: nothing to redo.
  auto existing = store.best(r.graph, out.new_runtime);
  if (!existing) return make_error(what + ": " + existing.error().message);
  if (existing.value() && existing.value()->model_version == kModelVersion) {
    out.current = true;
    out.new_makespan = existing.value()->makespan;
    return out;
  }

  const CostTable costs(graph.value(), cluster.value(), measured);
  Simulator sim(graph.value(), costs, cluster.value(), options.value());
  ScheduleRecord next = r;
  next.cluster = out.new_runtime;
  next.model_version = kModelVersion;
  next.sim_options = sim_options_json(options.value());
  next.makespan = sim.makespan(r.placement);
  next.lower_bound = makespan_lower_bound(graph.value(), costs, cluster.value(), options.value());
  next.method = r.method.rfind("resimulated:", 0) == 0 ? r.method : "resimulated:" + r.method;
  next.found_at = 0;  // now

  auto put_cluster = store.put_cluster(next.cluster, cluster.value().to_yaml());
  if (!put_cluster) return make_error(what + ": " + put_cluster.error().message);
  auto stored = store.put_if_better(next);
  if (!stored) return make_error(what + ": " + stored.error().message);
  out.new_makespan = next.makespan;
  out.stored = stored.value();
  return out;
}

}  // namespace

Result<ResimulateReport> resimulate_stale(Store& store) {
  if (store.read_only()) return make_error("resimulate: database " + store.path() + " is open read-only");
  auto list = store.list_best();
  if (!list) return list.error();
  ResimulateReport report;
  for (const ScheduleRecord& r : list.value()) {
    if (r.is_pipeline() || r.model_version >= kModelVersion) continue;  // pipelines: their own version
    ++report.stale;
    auto done = resimulate_one(store, r);
    if (!done) {
      report.problems.push_back(done.error().message);
      continue;
    }
    if (done.value().current) {
      ++report.current;
      continue;
    }
    ++report.resimulated;
    if (done.value().stored) ++report.stored;
    report.items.push_back(std::move(done).value());
  }
  return report;
}

}  // namespace gantry
