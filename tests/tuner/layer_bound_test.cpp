// The bound with whole layers per device (whole_layer_bound) against a brute force over every
// assignment of layers to devices: never above the best assignment, with or without a limit on
// each device's runs of consecutive layers, and raised by that limit where it binds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "tuner/pipeline/layer_bound.hpp"

using namespace gantry;

namespace {

// The busiest device's time in the best assignment of the layers to `devices` devices whose
// devices hold at most `max_runs` runs of consecutive layers each (0: any number).
double best_assignment(const std::vector<double>& times, int devices, int max_runs) {
  const int layers = static_cast<int>(times.size());
  std::vector<int> device(layers, 0);
  double best = 1e300;
  while (true) {
    std::vector<double> load(devices, 0);
    std::vector<int> runs(devices, 0);
    for (int i = 0; i < layers; ++i) {
      load[device[i]] += times[i];
      if (i == 0 || device[i - 1] != device[i]) ++runs[device[i]];
    }
    const bool fits = max_runs == 0 || *std::max_element(runs.begin(), runs.end()) <= max_runs;
    if (fits) best = std::min(best, *std::max_element(load.begin(), load.end()));
    int i = 0;  // the next assignment, counting in base `devices`
    while (i < layers && ++device[i] == devices) device[i++] = 0;
    if (i == layers) return best;
  }
}

}  // namespace

TEST_CASE("the bound with whole layers never exceeds the best assignment and rises where runs are limited",
          "[tuner][pipeline]") {
  std::mt19937_64 rng(7);
  int raised = 0, tight = 0, cases = 0;
  for (int round = 0; round < 150; ++round) {
    const int layers = std::uniform_int_distribution<int>(3, 8)(rng);
    const int devices = std::uniform_int_distribution<int>(2, 3)(rng);
    std::vector<double> times(layers);
    // Few distinct times (as models have: a few layer types), so equal-time layers compete.
    for (double& t : times) t = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 1.0 : 2.0 + std::uniform_int_distribution<int>(0, 1)(rng);
    const double any_runs = whole_layer_bound(times, devices);
    CHECK(any_runs <= best_assignment(times, devices, 0) + 1e-9);
    for (int max_runs = 1; max_runs <= 3; ++max_runs) {
      const double bound = whole_layer_bound(times, devices, max_runs), best = best_assignment(times, devices, max_runs);
      ++cases;
      CHECK(bound <= best + 1e-9);
      CHECK(bound >= any_runs - 1e-9);
      if (bound > any_runs + 1e-9) ++raised;
      if (bound > best - 1e-9) ++tight;
    }
  }
  // The limit matters (a device with one run takes neighbours, not the lightest layers) and the
  // bound is often the optimum itself.
  CHECK(raised >= cases / 10);
  CHECK(tight >= cases / 2);
}

TEST_CASE("the bound with whole layers by hand", "[tuner][pipeline]") {
  // Alternating layers of 1 and 2 on 2 devices: work / devices is 4.5; some device holds two of
  // the three 2s, at least 4 with any runs; in one run they come with the 1 between them: 5.
  const std::vector<double> alternating{1, 2, 1, 2, 1, 2};
  CHECK(whole_layer_bound(alternating, 2) == Approx(4.5));
  CHECK(whole_layer_bound(alternating, 2, 1) == Approx(5.0));
  // One long layer: it alone bounds the busiest device.
  CHECK(whole_layer_bound({9, 1, 1, 1}, 2) == Approx(9.0));
  CHECK(whole_layer_bound({}, 2) == 0);
}
