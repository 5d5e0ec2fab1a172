#include "actors/background_improvement.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace gantry {

bool is_background_run(const JobRecord& record) { return !record.improves.empty(); }

bool at_lower_bound(const ScheduleRecord& best) {
  return best.lower_bound > 0 && best.makespan <= best.lower_bound * (1 + 1e-9);
}

namespace {

using ProblemKey = std::tuple<std::string, std::string, std::string>;  // kind, graph, runtime

struct Problem {
  double last_started = 0;
  bool busy = false;                      // a job of it is queued or running
  std::vector<const JobRecord*> sources;  // jobs with a spec to run again
};

}  // namespace

std::vector<std::string> improvement_order(const std::vector<JobRecord>& records) {
  std::map<ProblemKey, Problem> problems;
  for (const JobRecord& r : records) {
    if (r.kind != "tune" && r.kind != "pipeline") continue;
    Problem& p = problems[{r.kind, r.graph.hex(), r.cluster.hex()}];
    p.last_started = std::max(p.last_started, r.started);
    p.busy = p.busy || r.state == JobState::queued || r.state == JobState::running;
    if (!is_background_run(r)) p.sources.push_back(&r);
  }
  std::vector<Problem*> order;
  for (auto& [key, p] : problems) {
    if (p.busy || p.sources.empty()) continue;
    std::sort(p.sources.begin(), p.sources.end(), [](const JobRecord* a, const JobRecord* b) {
      return a->started != b->started ? a->started > b->started : a->id > b->id;
    });
    order.push_back(&p);
  }
  std::sort(order.begin(), order.end(), [](const Problem* a, const Problem* b) {
    return a->last_started != b->last_started ? a->last_started < b->last_started
                                              : a->sources.front()->id < b->sources.front()->id;
  });
  std::vector<std::string> out;
  for (const Problem* p : order)
    for (const JobRecord* r : p->sources) out.push_back(r->id);
  return out;
}

std::vector<std::string> background_runs_beyond(const std::vector<JobRecord>& records, const Fingerprint& graph,
                                                const Fingerprint& runtime, std::size_t keep) {
  std::vector<const JobRecord*> runs;
  for (const JobRecord& r : records)
    if (is_background_run(r) && r.graph == graph && r.cluster == runtime) runs.push_back(&r);
  std::sort(runs.begin(), runs.end(), [](const JobRecord* a, const JobRecord* b) {
    return a->started != b->started ? a->started > b->started : a->id > b->id;
  });
  std::vector<std::string> out;
  for (std::size_t k = keep; k < runs.size(); ++k)
    if (runs[k]->state != JobState::running && runs[k]->state != JobState::queued) out.push_back(runs[k]->id);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace gantry
