// The divisible-work bound (divisible_work_bound) against independent answers: work / devices on
// identical devices; total work over total speed when every layer's time scales with one speed
// per device; the primal optimum of two device kinds found by filling the fast kind in order of
// its advantage (an exchange argument, not the dual); and never above the best assignment of
// whole layers (brute force).
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "tuner/pipeline/work_bound.hpp"

using namespace gantry;

namespace {

using Times = std::vector<std::vector<double>>;

// The two-kind fractional optimum from the primal: all work on kind `slow`, then layers move to
// kind `fast` (each kind's load spread evenly over its devices), those it runs relatively fastest
// first, until the two loads meet inside a layer.
double two_kind_primal(const std::vector<double>& fast, int fast_devices, const std::vector<double>& slow,
                       int slow_devices) {
  std::vector<int> order(fast.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return fast[a] * slow[b] < fast[b] * slow[a]; });
  double on_fast = 0, on_slow = 0;
  for (int l : order) on_slow += slow[l] / slow_devices;
  for (int l : order) {
    const double gain = fast[l] / fast_devices, loss = slow[l] / slow_devices;
    if (on_fast + gain >= on_slow - loss) {
      const double share = (on_slow - on_fast) / (gain + loss);
      return on_fast + share * gain;
    }
    on_fast += gain;
    on_slow -= loss;
  }
  return on_fast;
}

// The busiest device's time in the best assignment of whole layers to devices.
double best_whole_assignment(const Times& times) {
  const int devices = static_cast<int>(times.size()), layers = static_cast<int>(times[0].size());
  std::vector<int> device(layers, 0);
  double best = 1e300;
  while (true) {
    std::vector<double> load(devices, 0);
    for (int l = 0; l < layers; ++l) load[device[l]] += times[device[l]][l];
    best = std::min(best, *std::max_element(load.begin(), load.end()));
    int i = 0;
    while (i < layers && ++device[i] == devices) device[i++] = 0;
    if (i == layers) return best;
  }
}

std::vector<double> random_times(std::mt19937& rng, int layers) {
  std::uniform_real_distribution<double> time(0.1, 2.0);
  std::vector<double> t(layers);
  for (double& x : t) x = time(rng);
  return t;
}

}  // namespace

TEST_CASE("divisible work on identical devices is work / devices", "[tuner][pipeline]") {
  const std::vector<double> layer{1.0, 2.5, 0.5, 4.0};
  CHECK(divisible_work_bound(Times(4, layer)) == Approx(8.0 / 4));
  CHECK(divisible_work_bound(Times(1, layer)) == Approx(8.0));
  CHECK(divisible_work_bound({}) == 0);
}

TEST_CASE("a fast and a slow device share work in proportion to their speeds", "[tuner][pipeline]") {
  // Four layers of 1 s on the fast device and 3 s on the slow one: the fast takes three layers'
  // work, the slow one (3 s): T = 3, where the work / devices of any placement says 2 to 6.
  CHECK(divisible_work_bound({{1, 1, 1, 1}, {3, 3, 3, 3}}) == Approx(3.0));
  // The same in picoseconds: the answer does not depend on the unit.
  CHECK(divisible_work_bound({{1e-12, 1e-12, 1e-12, 1e-12}, {3e-12, 3e-12, 3e-12, 3e-12}}) == Approx(3e-12));
  // Speeds 1, 2 and 4 (times scale as 1 / speed): total work at speed 1 over total speed.
  const std::vector<double> work{2.0, 1.0, 3.0, 0.5, 1.5};
  Times times;
  for (double speed : {1.0, 2.0, 4.0, 4.0, 2.0}) {
    times.emplace_back();
    for (double w : work) times.back().push_back(w / speed);
  }
  CHECK(divisible_work_bound(times) == Approx(8.0 / 13.0));
}

TEST_CASE("two device kinds: the dual's maximum equals the primal optimum", "[tuner][pipeline]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int layers = 1 + trial % 9, fast_devices = 1 + trial % 4, slow_devices = 1 + (trial / 4) % 3;
    const std::vector<double> fast = random_times(rng, layers), slow = random_times(rng, layers);
    Times times(fast_devices, fast);
    times.insert(times.begin() + trial % 2, slow_devices, slow);  // kinds in either order
    CHECK(divisible_work_bound(times) == Approx(two_kind_primal(fast, fast_devices, slow, slow_devices)));
  }
}

TEST_CASE("the divisible-work bound never exceeds the best whole-layer assignment", "[tuner][pipeline]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const int devices = 2 + trial % 3, layers = 3 + trial % 4;
    Times times;
    for (int d = 0; d < devices; ++d) times.push_back(random_times(rng, layers));
    const double bound = divisible_work_bound(times), best = best_whole_assignment(times);
    CHECK(bound <= best * (1 + 1e-12));
    // And at least what every device spread evenly gives (the dual at equal weights).
    double even = 0;
    for (int l = 0; l < layers; ++l) {
      double least = 1e300;
      for (int d = 0; d < devices; ++d) least = std::min(least, times[d][l] / devices);
      even += least;
    }
    CHECK(bound >= even * (1 - 1e-12));
  }
}

TEST_CASE("three device kinds: no weighting of the kinds gives a larger dual", "[tuner][pipeline]") {
  // The dual's value on a grid of kind weights (an independent search of the same maximum) never
  // beats the bound, and the best grid point comes within the grid's resolution of it.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const int layers = 2 + trial % 7;
    const std::vector<int> count{1 + trial % 2, 1 + trial % 3, 2};
    std::vector<std::vector<double>> kind_times;
    Times times;
    for (int k = 0; k < 3; ++k) {
      kind_times.push_back(random_times(rng, layers));
      times.insert(times.end(), count[k], kind_times.back());
    }
    const double bound = divisible_work_bound(times);
    constexpr int kSteps = 200;
    double grid_best = 0;
    for (int a = 0; a <= kSteps; ++a)
      for (int b = 0; a + b <= kSteps; ++b) {
        const double weight[3] = {double(a) / kSteps, double(b) / kSteps, double(kSteps - a - b) / kSteps};
        double value = 0;
        for (int l = 0; l < layers; ++l) {
          double least = 1e300;
          for (int k = 0; k < 3; ++k) least = std::min(least, weight[k] * kind_times[k][l] / count[k]);
          value += least;
        }
        grid_best = std::max(grid_best, value);
      }
    CHECK(grid_best <= bound * (1 + 1e-9));
    CHECK(grid_best >= bound * (1 - 0.02));
  }
}
