#include "executor/co_run.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/op_signature.hpp"

namespace gantry {

namespace {

using Interval = std::pair<double, double>;

// Sorted, disjoint intervals covering the same time as `intervals`.
std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

// Time of [begin, end) covered by the sorted, disjoint `cover`.
double covered(const std::vector<Interval>& cover, double begin, double end) {
  auto it = std::upper_bound(cover.begin(), cover.end(), Interval{begin, begin},
                             [](const Interval& a, const Interval& b) { return a.second < b.second; });
  double total = 0;
  for (; it != cover.end() && it->first < end; ++it) total += std::max(0.0, std::min(end, it->second) - std::max(begin, it->first));
  return total;
}

}  // namespace

std::vector<double> co_run_shares(const RunRecord& run, const Cluster& cluster) {
  std::vector<double> shares(run.ops.size(), 0.0);
  const int devices = cluster.size();
  std::vector<std::vector<Interval>> busy(static_cast<std::size_t>(devices));  // when each device ran an op
  for (const OpRecord& r : run.ops) busy[static_cast<std::size_t>(r.device)].emplace_back(r.start, r.end);
  for (auto& cover : busy) cover = merged(std::move(cover));
  for (const OpRecord& r : run.ops) {
    const double duration = r.end - r.start;
    if (duration <= 0) continue;
    double beside = 0;  // summed over the other devices of its host
    for (int d = 0; d < devices; ++d)
      if (d != r.device && cluster.device(d).host == cluster.device(r.device).host)
        beside += std::min(1.0, covered(busy[static_cast<std::size_t>(d)], r.start, r.end) / duration);
    shares[static_cast<std::size_t>(r.op)] = beside;
  }
  return shares;
}

std::vector<double> co_run_slowdowns(const Cluster& cluster, const ProfileTable* profiles) {
  std::vector<double> out;
  for (const Device& d : cluster.devices()) out.push_back(profiles ? profiles->co_run_slowdown(d.kind) : 1.0);
  return out;
}

double solo_seconds(double seconds, double share, double slowdown) { return seconds / (1 + (slowdown - 1) * share); }

void add_co_run_samples(const Graph& graph, const Cluster& cluster, const RunRecord& run,
                        std::vector<CoRunSample>* samples) {
  const std::vector<double> shares = co_run_shares(run, cluster);
  for (const OpRecord& r : run.ops)
    samples->push_back({cluster.device(r.device).kind, op_signature(graph, r.op).signature, r.end - r.start,
                        shares[static_cast<std::size_t>(r.op)]});
}

namespace {

// Sum of squared residuals of log time around each signature's mean, for factor `s`.
double residual(const std::vector<std::vector<const CoRunSample*>>& groups, double s) {
  double total = 0;
  for (const auto& group : groups) {
    double mean = 0;
    for (const CoRunSample* x : group) mean += std::log(solo_seconds(x->seconds, x->share, s));
    mean /= static_cast<double>(group.size());
    for (const CoRunSample* x : group) {
      const double r = std::log(solo_seconds(x->seconds, x->share, s)) - mean;
      total += r * r;
    }
  }
  return total;
}

}  // namespace

std::map<std::string, double> fit_co_run_slowdowns(const std::vector<CoRunSample>& samples) {
  std::map<std::string, std::map<std::string, std::vector<const CoRunSample*>>> by_kind;
  for (const CoRunSample& x : samples)
    if (x.seconds > 0 && x.share >= 0) by_kind[x.kind][x.signature].push_back(&x);  // shares count neighbours: up to D - 1
  std::map<std::string, double> fits;
  for (const auto& [kind, signatures] : by_kind) {
    std::vector<std::vector<const CoRunSample*>> groups;
    bool informative = false;
    for (const auto& [signature, group] : signatures) {
      const bool alone = std::any_of(group.begin(), group.end(), [](auto* x) { return x->share < 0.25; });
      const bool beside = std::any_of(group.begin(), group.end(), [](auto* x) { return x->share > 0.75; });
      informative = informative || (alone && beside);
      if (group.size() > 1) groups.push_back(group);
    }
    if (!informative) continue;
    // Golden-section search: the residual is unimodal in s over the range in practice.
    const double phi = (std::sqrt(5.0) - 1) / 2;
    double lo = 1, hi = 4;
    double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
    double fa = residual(groups, a), fb = residual(groups, b);
    for (int step = 0; step < 60; ++step) {
      if (fa <= fb) {
        hi = b;
        b = a;
        fb = fa;
        a = hi - phi * (hi - lo);
        fa = residual(groups, a);
      } else {
        lo = a;
        a = b;
        fa = fb;
        b = lo + phi * (hi - lo);
        fb = residual(groups, b);
      }
    }
    fits[kind] = (lo + hi) / 2;
  }
  return fits;
}

}  // namespace gantry
