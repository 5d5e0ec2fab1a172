#include "bench/partition_bench.hpp"

#include <algorithm>
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

// A run's devices are filed under a device kind of their own, "GPU-" + label: "streams" (D sets of
// streams sharing the GPU), "sms" (D SM sets, their solo times the whole GPU's) or "sms-ofD" (D SM
// sets, their solo times measured on one set of D working alone: a smaller GPU).
std::string kind_of(const std::string& label) { return "GPU-" + label; }

struct PartitionedRun {
  std::string method, label;
  int devices = 0;
  Placement placement;
  Measurement measurement;
};

struct GraphRuns {
  std::string name;
  Graph graph;
  Measurement solo;                     // the whole GPU, one device
  std::map<int, Measurement> sms_alone;  // D -> one of D SM sets working alone
  std::vector<PartitionedRun> partitioned;
};

// D partitions of one GPU as the simulator sees them: devices of the label's kind, one stream each,
// copying as gantry-exec's devices of the run's backend do (copy engines on cuda; a core copies
// itself in the CPU dry run).
Cluster partitions(int devices, const std::string& label, const std::string& backend) {
  std::vector<Device> list;
  for (int d = 0; d < devices; ++d) {
    Device device;
    device.name = "gpu0." + std::to_string(d);
    device.kind = kind_of(label);
    device.streams = 1;
    device.copy_engine = backend == "cuda";
    list.push_back(device);
  }
  return Cluster("1xGPU-as-" + std::to_string(devices) + "-" + label, std::move(list));
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
    const std::string g = o.set + "/g" + std::to_string(i), run = o.runs + "/" + o.set + "-g" + std::to_string(i);
    const std::string graph_file = o.cases + "/" + g + ".json";
    if (!std::filesystem::exists(graph_file)) break;
    auto graph = read_graph_file(graph_file);
    if (!graph) throw std::runtime_error(graph.error().message);
    GraphRuns runs{graph_file, std::move(graph).value(), {}, {}, {}};
    runs.solo = read_measurement(run + "-d1-single.json", runs.graph);
    for (int devices : {2, 4})
      if (const std::string alone = run + "-d1-single-sms-of" + std::to_string(devices) + ".json"; std::filesystem::exists(alone))
        runs.sms_alone[devices] = read_measurement(alone, runs.graph);
    for (int devices : {2, 4})
      for (const std::string method : {"heft", "round-robin"})
        for (const bool sms : {false, true}) {
          const std::string file = run + "-d" + std::to_string(devices) + "-" + method + (sms ? "-sms" : "") + ".json";
          if (!std::filesystem::exists(file)) continue;
          auto placement = read_placement_file(o.cases + "/" + g + "-d" + std::to_string(devices) + "-" + method + ".json");
          if (!placement) throw std::runtime_error(placement.error().message);
          runs.partitioned.push_back({method, sms ? "sms" : "streams", devices, placement.value().placement,
                                      read_measurement(file, runs.graph)});
        }
    out.push_back(std::move(runs));
  }
  if (out.empty()) throw std::runtime_error("no graphs in " + o.cases + "/" + o.set + " (g1.json, g2.json, ...)");
  // Where every graph has a run of one SM set working alone, its SM runs of that size are costed
  // from it ("sms-ofD"); else from the whole GPU's solo times ("sms").
  for (const auto& [devices, unused] : out.front().sms_alone) {
    if (!std::all_of(out.begin(), out.end(), [&](const GraphRuns& g) { return g.sms_alone.count(devices) > 0; })) continue;
    for (GraphRuns& g : out)
      for (PartitionedRun& run : g.partitioned)
        if (run.label == "sms" && run.devices == devices) run.label = "sms-of" + std::to_string(devices);
  }
  return out;
}

// The runs that give a label's solo op times: the whole GPU's, or one SM set's working alone.
std::vector<std::pair<std::string, const Measurement*>> solo_runs(const GraphRuns& g) {
  std::vector<std::pair<std::string, const Measurement*>> out = {{"streams", &g.solo}, {"sms", &g.solo}};
  for (const auto& [devices, run] : g.sms_alone) out.push_back({"sms-of" + std::to_string(devices), &run});
  return out;
}

// The devices a label's solo run had: one of D SM sets (its neighbours idle), or the whole GPU.
int solo_devices(const std::string& label) { return label.rfind("sms-of", 0) == 0 ? std::stoi(label.substr(6)) : 1; }

// Solo op times of every graph under each label's kind: profiling measures op kinds before any
// placement is predicted.
ProfileTable solo_profiles(const std::vector<GraphRuns>& graphs) {
  ProfileTable table;
  for (const GraphRuns& g : graphs)
    for (const auto& [label, run] : solo_runs(g))
      add_profile_samples(g.graph, partitions(solo_devices(label), label, run->backend), run->median_run, &table);
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
    for (const auto& [label, run] : solo_runs(g))  // each op's time with no busy neighbour
      add_co_run_samples(g.graph, partitions(solo_devices(label), label, run->backend), run->median_run, &samples);
    for (const PartitionedRun& run : g.partitioned) {
      const Cluster cluster = partitions(run.devices, run.label, run.measurement.backend);
      add_co_run_samples(g.graph, cluster, run.measurement.median_run, &samples);
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

double factor_of(const PartitionFit& fitted, const std::string& label) {
  const auto found = fitted.factors.find(kind_of(label));
  return found == fitted.factors.end() ? 0 : found->second;
}

double predict(const GraphRuns& g, const PartitionedRun& run, const ProfileTable& profiles) {
  const Cluster cluster = partitions(run.devices, run.label, run.measurement.backend);
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
  std::vector<std::string> labels;  // in order of first appearance
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const GraphRuns& g = graphs[i];
    report.graphs.push_back(g.name);
    const PartitionFit others_fit = fit(graphs, i);
    const ProfileTable others = profiles_of(solo, others_fit, true);
    for (const PartitionedRun& run : g.partitioned) {
      if (std::find(labels.begin(), labels.end(), run.label) == labels.end()) labels.push_back(run.label);
      PartitionRow row;
      row.graph = g.name;
      row.placement = run.method;
      row.mode = run.label;
      row.devices = run.devices;
      row.measured = run.measurement.median;
      row.no_slowdown = predict(g, run, no_slowdown);
      row.in_sample = predict(g, run, everything);
      row.out_of_sample = predict(g, run, others);
      row.out_of_sample_factor = factor_of(others_fit, run.label);
      report.rows.push_back(row);
    }
  }
  for (const std::string& label : labels) {
    PartitionModeSummary s;
    s.mode = label;
    s.factor = factor_of(all_graphs, label);
    std::vector<double> none, in, out;
    for (const PartitionRow& r : report.rows)
      if (r.mode == label) {
        none.push_back(r.no_slowdown / r.measured - 1);
        in.push_back(r.in_sample / r.measured - 1);
        out.push_back(r.out_of_sample / r.measured - 1);
      }
    s.runs = static_cast<int>(in.size());
    std::tie(s.no_slowdown_mean, s.no_slowdown_p90) = mean_and_p90(none);
    std::tie(s.in_sample_mean, s.in_sample_p90) = mean_and_p90(in);
    std::tie(s.out_of_sample_mean, s.out_of_sample_p90) = mean_and_p90(out);
    report.modes.push_back(s);
  }
  return report;
}

}  // namespace gantry
