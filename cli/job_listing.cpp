#include "cli/job_listing.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/text_table.hpp"

namespace gantry::cli {

void print_jobs(std::ostream& out, std::vector<JobRecord> jobs, bool json, const std::string& where, bool background) {
  // Ended, or interrupted by a restart (a background run is never resumed).
  const auto ended_background = [](const JobRecord& r) {
    return !r.improves.empty() && r.state != JobState::running && r.state != JobState::queued;
  };
  const auto hidden = background ? 0 : std::count_if(jobs.begin(), jobs.end(), ended_background);
  if (hidden > 0) jobs.erase(std::remove_if(jobs.begin(), jobs.end(), ended_background), jobs.end());
  std::sort(jobs.begin(), jobs.end(), [](const JobRecord& a, const JobRecord& b) { return a.started < b.started; });
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : jobs)
      j.push_back({{"id", r.id}, {"kind", r.kind}, {"state", to_string(r.state)}, {"graph", r.graph_label}, {"cluster", r.cluster_name},
                   {"graph_fingerprint", r.graph.hex()}, {"runtime_fingerprint", r.cluster.hex()},
                   {"started", r.started}, {"finished", r.finished}, {"evaluations", r.evaluations},
                   {"best_makespan", r.best_makespan}, {"owner_pid", r.owner_pid}, {"owner_host", r.owner_host},
                   {"message", r.message}, {"improves", r.improves}});
    out << j.dump(2) << "\n";
    return;
  }
  TextTable t({"job", "kind", "state", "graph", "cluster", "started", "seconds", "evaluations", "best", "owner", "message"});
  for (const auto& r : jobs)
    t.add({r.id, r.kind, to_string(r.state), r.graph_label, r.cluster_name, format_unix_time(r.started),
           r.finished > 0 ? format_fixed(r.finished - r.started, 1) : "-", std::to_string(r.evaluations),
           r.best_makespan > 0 ? format_fixed(r.best_makespan, 6) : "-",
           r.owner_pid > 0 ? std::to_string(r.owner_pid) + "@" + r.owner_host : "-", r.message});
  t.print(out);
  out << jobs.size() << " job(s) " << where;
  if (hidden > 0) out << " (and " << hidden << " background improvement runs: --background lists them)";
  out << "\n";
}

}  // namespace gantry::cli
