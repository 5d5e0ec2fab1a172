#include "tuner/pipeline/layer_bound.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>

namespace gantry {
namespace {

constexpr double kUnreachable = std::numeric_limits<double>::infinity();

// The least time of at most `max_runs` runs of consecutive layers holding `need` layers of time
// `heavy` or more: dynamic programming over the layers, by heavy layers taken (capped at
// `need`), runs begun and whether the previous layer was taken.
double cheapest_runs_holding(const std::vector<double>& times, double heavy, int need, int max_runs) {
  const int counts = need + 1, runs = max_runs + 1;
  auto at = [&](int taken, int begun, int inside) { return (taken * runs + begun) * 2 + inside; };
  std::vector<double> best(static_cast<std::size_t>(counts) * runs * 2, kUnreachable), next(best.size());
  best[at(0, 0, 0)] = 0;
  for (double t : times) {
    std::fill(next.begin(), next.end(), kUnreachable);
    const int heavy_here = t >= heavy ? 1 : 0;
    for (int taken = 0; taken < counts; ++taken)
      for (int begun = 0; begun < runs; ++begun)
        for (int inside = 0; inside < 2; ++inside) {
          const double v = best[at(taken, begun, inside)];
          if (v == kUnreachable) continue;
          double& skip = next[at(taken, begun, 0)];
          skip = std::min(skip, v);
          const int now = std::min(need, taken + heavy_here), runs_now = begun + (inside ? 0 : 1);
          if (runs_now > max_runs) continue;
          double& take = next[at(now, runs_now, 1)];
          take = std::min(take, v + t);
        }
    best.swap(next);
  }
  double cheapest = kUnreachable;
  for (int begun = 0; begun < runs; ++begun)
    cheapest = std::min({cheapest, best[at(need, begun, 0)], best[at(need, begun, 1)]});
  return cheapest;
}

// The least time of `need` of `heavies` (each its own run, when runs are not limiting).
double lightest_sum(std::vector<double> heavies, int need) {
  std::partial_sort(heavies.begin(), heavies.begin() + need, heavies.end());
  return std::accumulate(heavies.begin(), heavies.begin() + need, 0.0);
}

}  // namespace

double whole_layer_bound(const std::vector<double>& layer_times, int devices, int max_runs) {
  if (layer_times.empty() || devices < 1) return 0;
  double bound = std::accumulate(layer_times.begin(), layer_times.end(), 0.0) / devices;
  std::vector<double> thresholds = layer_times;
  std::sort(thresholds.begin(), thresholds.end());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  for (double heavy : thresholds) {
    std::vector<double> heavies;
    for (double t : layer_times)
      if (t >= heavy) heavies.push_back(t);
    const int need = static_cast<int>((heavies.size() + devices - 1) / devices);
    const bool runs_bind = max_runs > 0 && max_runs < need;
    bound = std::max(bound, runs_bind ? cheapest_runs_holding(layer_times, heavy, need, max_runs)
                                       : lightest_sum(std::move(heavies), need));
  }
  return bound;
}

}  // namespace gantry
