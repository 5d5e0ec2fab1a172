#include "bench/partition_bench.hpp"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "bench/error_summary.hpp"
#include "core/cost_model.hpp"
#include "core/graph_io.hpp"
#include "core/json_util.hpp"
#include "core/op_signature.hpp"
#include "core/placement.hpp"
#include "core/profile_table.hpp"
#include "executor/co_run.hpp"
#include "executor/measurement_json.hpp"
#include "executor/profile_samples.hpp"
#include "sim/simulator.hpp"

namespace gantry {

namespace {

struct PartitionedRun {
  std::string method, mode;
  int devices = 0;
  Placement placement;
  Measurement measurement;
};

struct GraphRuns {
  std::string name;
  Graph graph;
  Measurement solo;
  std::vector<PartitionedRun> partitioned;
};

const char* const kModes[] = {"streams", "sms"};

// The device kind a mode's devices are filed under: the same GPU, split two ways.
std::string kind_of(const std::string& mode) { return mode == "sms" ? "GPU-sms" : "GPU-streams"; }

// D partitions of one GPU as the simulator sees them: devices of the mode's kind, one stream each,
// copy engines (gantry-exec's cuda devices).
Cluster partitions(int devices, const std::string& mode) {
  std::vector<Device> list;
  for (int d = 0; d < devices; ++d) {
    Device device;
    device.name = "gpu0." + std::to_string(d);
    device.kind = kind_of(mode);
    device.streams = 1;
    device.copy_engine = true;
    list.push_back(device);
  }
  return Cluster("1xGPU-as-" + std::to_string(devices) + "-" + mode, std::move(list));
}

Measurement read_measurement(const std::string& path, const Graph& graph) {
  auto text = read_text_file(path);
  if (!text) throw std::runtime_error(text.error().message);
  auto m = measurement_from_json(text.value(), graph, path);
  if (!m) throw std::runtime_error(m.error().message);
  return std::move(m).value();
}

std::vector<GraphRuns> read_runs(const PartitionOptions& o) {
  std::vector<GraphRuns> out;
  for (int i = 1;; ++i) {
    const std::string g = "g" + std::to_string(i);
    const std::string graph_file = o.cases + "/" + o.set + "/" + g + ".json";
    if (!std::filesystem::exists(graph_file)) break;
    auto graph = read_graph_file(graph_file);
    if (!graph) throw std::runtime_error(graph.error().message);
    GraphRuns runs{graph_file, std::move(graph).value(), {}, {}};
    runs.solo = read_measurement(o.runs + "/" + o.set + "-" + g + "-d1-single.json", runs.graph);
    for (int devices : {2, 4})
      for (const std::string method : {"heft", "round-robin"})
        for (const std::string mode : kModes) {
          const std::string run = o.runs + "/" + o.set + "-" + g + "-d" + std::to_string(devices) + "-" + method +
                                  (mode == "sms" ? "-sms" : "") + ".json";
          if (!std::filesystem::exists(run)) continue;
          auto placement = read_placement_file(o.cases + "/" + o.set + "/" + g + "-d" + std::to_string(devices) + "-" +
                                               method + ".json");
          if (!placement) throw std::runtime_error(placement.error().message);
          runs.partitioned.push_back({method, mode, devices, placement.value().placement, read_measurement(run, runs.graph)});
        }
    out.push_back(std::move(runs));
  }
  if (out.empty()) throw std::runtime_error("no graphs in " + o.cases + "/" + o.set + " (g1.json, g2.json, ...)");
  return out;
}

// Solo op times of every graph, from its one-device run, under each mode's kind: profiling
// measures op kinds before any placement is predicted.
ProfileTable solo_profiles(const std::vector<GraphRuns>& graphs) {
  ProfileTable table;
  for (const char* mode : kModes)
    for (const GraphRuns& g : graphs) add_profile_samples(g.graph, partitions(1, mode), g.solo.median_run, &table);
  return table;
}

// What the partitioned runs of `graphs` (all but `skip`) show: the copies' times and each kind's
// co-run factor.
struct PartitionFit {
  ProfileTable copies;
  std::map<std::string, double> factors;
};

PartitionFit fit(const std::vector<GraphRuns>& graphs, std::size_t skip) {
  std::vector<CoRunSample> samples;
  PartitionFit out;
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    if (i == skip) continue;
    const GraphRuns& g = graphs[i];
    for (const char* mode : kModes)  // the solo runs: each op's time with no busy neighbour
      for (const OpRecord& r : g.solo.median_run.ops)
        samples.push_back({kind_of(mode), op_signature(g.graph, r.op).signature, r.end - r.start, 0.0});
    for (const PartitionedRun& run : g.partitioned) {
      const Cluster cluster = partitions(run.devices, run.mode);
      const std::vector<double> shares = co_run_shares(run.measurement.median_run, cluster);
      for (const OpRecord& r : run.measurement.median_run.ops)
        samples.push_back({kind_of(run.mode), op_signature(g.graph, r.op).signature, r.end - r.start,
                           shares[static_cast<std::size_t>(r.op)]});
      ProfileTable all;
      add_profile_samples(g.graph, cluster, run.measurement.median_run, &all);
      for (const ProfileEntry& e : all.entries())
        if (e.device_kind.find("->") != std::string::npos) out.copies.merge(e);  // transfers only: ops are solo's
    }
  }
  out.factors = fit_co_run_slowdowns(samples);
  return out;
}

// The solo op times with a fit's copies and, when asked, its factors.
ProfileTable profiles_of(const ProfileTable& solo, const PartitionFit& fitted, bool with_factors) {
  ProfileTable out = solo;
  for (const ProfileEntry& e : fitted.copies.entries()) out.merge(e);
  if (with_factors)
    for (const auto& [kind, factor] : fitted.factors) out.add_co_run_slowdown(kind, factor);
  return out;
}

double predict(const GraphRuns& g, const PartitionedRun& run, const ProfileTable& profiles) {
  const Cluster cluster = partitions(run.devices, run.mode);
  const CostTable costs(g.graph, cluster, &profiles);
  return Simulator(g.graph, costs, cluster).makespan(run.placement);
}

}  // namespace

PartitionReport run_partition_bench(const PartitionOptions& o) {
  const std::vector<GraphRuns> graphs = read_runs(o);
  const ProfileTable solo = solo_profiles(graphs);
  const PartitionFit all_graphs = fit(graphs, graphs.size());
  const ProfileTable everything = profiles_of(solo, all_graphs, true), no_slowdown = profiles_of(solo, all_graphs, false);
  PartitionReport report;
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const GraphRuns& g = graphs[i];
    report.graphs.push_back(g.name);
    const PartitionFit others_fit = fit(graphs, i);
    const ProfileTable others = profiles_of(solo, others_fit, true);
    for (const PartitionedRun& run : g.partitioned) {
      PartitionRow row;
      row.graph = g.name;
      row.placement = run.method;
      row.mode = run.mode;
      row.devices = run.devices;
      row.measured = run.measurement.median;
      row.no_slowdown = predict(g, run, no_slowdown);
      row.in_sample = predict(g, run, everything);
      row.out_of_sample = predict(g, run, others);
      const auto factor = others_fit.factors.find(kind_of(run.mode));
      row.out_of_sample_factor = factor == others_fit.factors.end() ? 0 : factor->second;
      report.rows.push_back(row);
    }
  }
  for (const char* mode : kModes) {
    PartitionModeSummary s;
    s.mode = mode;
    const auto factor = all_graphs.factors.find(kind_of(mode));
    s.factor = factor == all_graphs.factors.end() ? 0 : factor->second;
    std::vector<double> none, in, out;
    for (const PartitionRow& r : report.rows)
      if (r.mode == mode) {
        none.push_back(r.no_slowdown / r.measured - 1);
        in.push_back(r.in_sample / r.measured - 1);
        out.push_back(r.out_of_sample / r.measured - 1);
      }
    s.runs = static_cast<int>(in.size());
    if (s.runs == 0) continue;
    std::tie(s.no_slowdown_mean, s.no_slowdown_p90) = mean_and_p90(none);
    std::tie(s.in_sample_mean, s.in_sample_p90) = mean_and_p90(in);
    std::tie(s.out_of_sample_mean, s.out_of_sample_p90) = mean_and_p90(out);
    report.modes.push_back(s);
  }
  return report;
}

}  // namespace gantry
