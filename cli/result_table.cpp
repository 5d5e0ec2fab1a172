#include "cli/result_table.hpp"

#include <cstdio>

#include "cli/text_table.hpp"
#include "core/fingerprint.hpp"

namespace gantry::cli {

namespace {

std::vector<double> utilization(const SimResult& r) {
  std::vector<double> u;
  for (double busy : r.busy) u.push_back(r.makespan > 0 ? busy / r.makespan : 0);
  return u;
}

}  // namespace

nlohmann::json method_json(const Problem& problem, const MethodRow& row, double lower_bound) {
  nlohmann::json j;
  j["method"] = row.outcome.method;
  j["makespan"] = row.outcome.makespan;
  j["lower_bound"] = lower_bound;
  j["unit"] = problem.graph.cost_unit();
  j["graph"] = problem.graph_label;
  j["graph_fingerprint"] = fingerprint(problem.graph).hex();
  j["cluster"] = problem.cluster.name();
  j["utilization"] = utilization(row.result);
  j["transfers"] = row.result.transfers;
  j["transfer_bytes"] = row.result.transfer_bytes;
  j["transfer_time"] = row.result.transfer_time;
  j["exposed_transfer_time"] = row.result.exposed_transfer_time;
  if (row.outcome.planned >= 0) j["planned_makespan"] = row.outcome.planned;
  j["evaluations"] = row.outcome.evaluations;
  j["seconds"] = row.outcome.seconds;
  j["placement"] = row.outcome.placement.device;
  if (row.outcome.placement.has_priority()) j["priority"] = row.outcome.placement.priority;
  return j;
}

nlohmann::json methods_json(const Problem& problem, const std::vector<MethodRow>& rows, double lower_bound) {
  if (rows.size() == 1) return method_json(problem, rows[0], lower_bound);
  nlohmann::json list = nlohmann::json::array();
  for (const MethodRow& row : rows) list.push_back(method_json(problem, row, lower_bound));
  return list;
}

void print_methods_table(std::ostream& out, const Problem& problem, const std::vector<MethodRow>& rows, double lower_bound) {
  const std::string& unit = problem.graph.cost_unit();
  out << "graph    " << problem.graph_label << " (" << problem.graph.size() << " ops, " << problem.graph.num_edges()
      << " edges)\ncluster  " << problem.cluster.summary() << "\nbound    " << format_time(lower_bound, unit)
      << " (max of critical path and work / devices)\n\n";
  TextTable table({"method", "makespan", "x bound", "utilization per device", "transfers", "exposed", "time"});
  for (const MethodRow& row : rows) {
    std::string util;
    for (double u : utilization(row.result)) util += (util.empty() ? "" : " ") + format_fixed(100 * u, 0) + "%";
    char ratio[16], secs[16];
    std::snprintf(ratio, sizeof ratio, "%.3f", lower_bound > 0 ? row.outcome.makespan / lower_bound : 0.0);
    std::snprintf(secs, sizeof secs, "%.2fs", row.outcome.seconds);
    std::string transfers = std::to_string(row.result.transfers);
    if (row.result.transfer_bytes > 0) transfers += " / " + format_bytes(row.result.transfer_bytes);
    table.add({row.outcome.method, format_time(row.outcome.makespan, unit), ratio, util, transfers,
               format_time(row.result.exposed_transfer_time, unit), secs});
  }
  table.print(out);
}

}  // namespace gantry::cli
