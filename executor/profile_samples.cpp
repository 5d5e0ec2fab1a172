#include "executor/profile_samples.hpp"

#include <algorithm>
#include <map>

#include "executor/co_run.hpp"

namespace gantry {

namespace {

// How long an idle device takes to start an op once its last input arrived from another device:
// the median over ops whose start waited on such an arrival while their device had nothing to run.
double median_wake_gap(const Graph& graph, const RunRecord& run) {
  std::map<std::pair<OpId, int>, double> arrival;
  for (const TransferRecord& t : run.transfers) arrival[{t.op, t.to}] = t.end;
  std::vector<std::vector<const OpRecord*>> by_device;
  for (const OpRecord& r : run.ops) {
    if (static_cast<std::size_t>(r.device) >= by_device.size()) by_device.resize(static_cast<std::size_t>(r.device) + 1);
    by_device[static_cast<std::size_t>(r.device)].push_back(&r);
  }
  std::vector<double> device_free(run.ops.size(), 0);  // per op: when its device's previous op ended
  for (auto& ops : by_device) {
    std::sort(ops.begin(), ops.end(), [](auto* a, auto* b) { return a->start < b->start; });
    for (std::size_t i = 1; i < ops.size(); ++i) device_free[static_cast<std::size_t>(ops[i]->op)] = ops[i - 1]->end;
  }
  std::vector<double> gaps;
  for (const OpRecord& r : run.ops) {
    double ready = 0;
    bool remote_last = false;
    for (OpId src : graph.preds(r.op)) {
      const OpRecord& p = run.ops[static_cast<std::size_t>(src)];
      const bool remote = p.device != r.device;
      const double at = remote ? arrival[{src, r.device}] : p.end;
      if (at >= ready) {
        remote_last = remote;
        ready = at;
      }
    }
    if (remote_last && ready >= device_free[static_cast<std::size_t>(r.op)]) gaps.push_back(r.start - ready);
  }
  if (gaps.empty()) return 0;
  const std::size_t middle = (gaps.size() - 1) / 2;  // the lower median
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(middle), gaps.end());
  return std::max(0.0, gaps[middle]);
}

}  // namespace

void add_profile_samples(const Graph& graph, const Cluster& cluster, const RunRecord& run, ProfileTable* samples,
                         const std::vector<double>& co_run_slowdown) {
  const bool solo = std::any_of(co_run_slowdown.begin(), co_run_slowdown.end(), [](double s) { return s != 1.0; });
  const std::vector<double> shares = solo ? co_run_shares(run, cluster) : std::vector<double>{};
  for (const OpRecord& r : run.ops) {
    double seconds = r.end - r.start;
    if (solo) seconds = solo_seconds(seconds, shares[static_cast<std::size_t>(r.op)], co_run_slowdown[static_cast<std::size_t>(r.device)]);
    samples->add(cluster.device(r.device).kind, op_signature(graph, r.op), seconds);
  }
  // A transfer as the simulator times it: from when both the tensor and the copier were ready (the
  // producer's end; the link's previous transfer, or, when the source copies itself, its previous
  // copy of the same op: other ops' copies may run on its other streams) to when the consumer
  // could start, so the link thread's wake-up and the median wake-up of an idle consumer device
  // count as the transfer's.
  const double wake = median_wake_gap(graph, run);
  std::map<std::pair<int, int>, double> copier_free;  // per (source, destination), or (source, -1 - op)
  std::vector<const TransferRecord*> by_start;
  for (const TransferRecord& t : run.transfers) by_start.push_back(&t);
  std::sort(by_start.begin(), by_start.end(), [](auto* a, auto* b) { return a->start < b->start; });
  for (const TransferRecord* t : by_start) {
    double& free = copier_free[{t->from, cluster.device(t->from).copy_engine ? t->to : -1 - t->op}];
    const double begin = std::max(run.ops[static_cast<std::size_t>(t->op)].end, free);
    free = t->end;
    const std::string& from = cluster.device(t->from).kind;
    const std::string& to = cluster.device(t->to).kind;
    const double seconds = t->end - begin + wake;
    samples->add(transfer_kind(from, to), transfer_signature(t->bytes), seconds);
    samples->add(transfer_pair_kind(from, to, t->from, t->to), transfer_signature(t->bytes), seconds);
  }
}

bool gives_profile_samples(const std::string& backend, int gpus, const Cluster& cluster) {
  return backend != "cuda" || gpus >= cluster.size();
}

}  // namespace gantry
