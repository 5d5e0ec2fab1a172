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

// The bound's own definition by enumeration (every set of layers, not the dynamic programming):
// the largest of work / devices and, per layer time w, the least time of a set of at most
// `max_runs` runs holding ceil(n_w / devices) layers of time w or more.
double bound_by_enumeration(const std::vector<double>& times, int devices, int max_runs) {
  const int layers = static_cast<int>(times.size());
  double bound = 0;
  for (double t : times) bound += t / devices;
  for (double heavy : times) {
    int heavies = 0;
    for (double t : times) heavies += t >= heavy;
    const int need = (heavies + devices - 1) / devices;
    double cheapest = 1e300;
    for (unsigned set = 1; set < (1u << layers); ++set) {
      int held = 0, runs = 0;
      double time = 0;
      for (int i = 0; i < layers; ++i)
        if (set & (1u << i)) {
          held += times[i] >= heavy;
          time += times[i];
          if (i == 0 || !(set & (1u << (i - 1)))) ++runs;
        }
      if (held >= need && (max_runs == 0 || runs <= max_runs)) cheapest = std::min(cheapest, time);
    }
    bound = std::max(bound, cheapest);
  }
  return bound;
}

}  // namespace

TEST_CASE("the bound with whole layers never exceeds the best assignment and rises where runs are limited",
          "[tuner][pipeline]") {
  std::mt19937_64 rng(7);
  int raised = 0, tight = 0, cases = 0;
  for (int round = 0; round < 150; ++round) {
    const int layers = std::uniform_int_distribution<int>(3, 8)(rng);
    const int devices = std::uniform_int_distribution<int>(2, round % 10 == 0 ? 4 : 3)(rng);
    std::vector<double> times(layers);
    // Few distinct times (as models have: a few layer types, an embedding of no time), so
    // equal-time layers compete.
    for (double& t : times) t = std::uniform_int_distribution<int>(0, 4)(rng);
    const double any_runs = whole_layer_bound(times, devices);
    CHECK(any_runs <= best_assignment(times, devices, 0) + 1e-9);
    CHECK(any_runs == Approx(bound_by_enumeration(times, devices, 0)));
    for (int max_runs = 1; max_runs <= 3; ++max_runs) {
      const double bound = whole_layer_bound(times, devices, max_runs), best = best_assignment(times, devices, max_runs);
      ++cases;
      CHECK(bound <= best + 1e-9);
      CHECK(bound == Approx(bound_by_enumeration(times, devices, max_runs)));
      CHECK(bound >= any_runs - 1e-9);
      if (bound > any_runs + 1e-9) ++raised;
      if (bound > best - 1e-9) ++tight;
    }
  }
  // The limit matters (a device with one run takes neighbours, not the lightest layers) and the
  // bound is often the optimum itself.
  CHECK(raised >= cases / 20);
  CHECK(tight >= cases / 2);
}

TEST_CASE("the bound with whole layers by hand", "[tuner][pipeline]") {
  // Alternating layers of 1 and 2 on 2 devices: work / devices is 4.5; some device holds two of
  // the three 2s, at least 4 with any runs; in one run they come with the 1 between them: 5.
  const std::vector<double> alternating{1, 2, 1, 2, 1, 2};
  CHECK(whole_layer_bound(alternating, 2) == Approx(4.5));
  CHECK(whole_layer_bound(alternating, 2, 1) == Approx(5.0));
  // Two runs on 2 devices: some device holds two of the three 3s; two runs hold any two alone.
  // With one, the 1 between the first two comes along: 7.
  const std::vector<double> threes{3, 1, 3, 1, 1, 3};
  CHECK(whole_layer_bound(threes, 2, 2) == Approx(6.0));
  CHECK(whole_layer_bound(threes, 2, 1) == Approx(7.0));
  // One long layer: it alone bounds the busiest device; more devices than layers too.
  CHECK(whole_layer_bound({9, 1, 1, 1}, 2) == Approx(9.0));
  CHECK(whole_layer_bound({0, 4, 0}, 5) == Approx(4.0));
  CHECK(whole_layer_bound({}, 2) == 0);
}
