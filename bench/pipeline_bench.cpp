#include "bench/pipeline_bench.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "sim/pipeline_simulation.hpp"
#include "tuner/pipeline/schedule_registry.hpp"

namespace gantry {

namespace {

StageCosts bench_costs(int p) {
  StageCosts c;
  for (int s = 0; s < p; ++s) {
    c.f.push_back(1.0 + 0.1 * (s % 3));
    c.b.push_back(1.1 + 0.1 * (s % 2));
    c.w.push_back(0.8);
    c.comm.push_back(0.05);
    c.mem_f.push_back(10);
    c.mem_b.push_back(-7);
    c.mem_w.push_back(-3);
    c.static_memory.push_back(100);
    c.flops.push_back(0);
  }
  return c;
}

}  // namespace

std::vector<PipelineBenchRow> run_pipeline_bench(const std::vector<std::pair<int, int>>& sizes, double seconds_per_case) {
  std::vector<PipelineBenchRow> rows;
  for (auto [p, m] : sizes) {
    const StageCosts costs = bench_costs(p);
    for (const std::string name : {"1f1b", "zb"}) {
      auto choice = schedule_registry().find(name);  // one stage per device: `costs` fit both
      if (!choice) throw std::runtime_error(choice.error().message);
      auto scheme = choice.value().kind->build(p, m, choice.value().layout, costs);
      if (!scheme) throw std::runtime_error(scheme.error().message);
      std::vector<double> ms;
      int ops = 0;
      const auto begin = std::chrono::steady_clock::now();
      for (;;) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = simulate_pipeline(scheme.value(), costs);  // compile + simulate + metrics
        const auto t1 = std::chrono::steady_clock::now();
        if (!r || !r.value().completed) throw std::runtime_error("bench pipeline: the scheme did not run");
        ops = r.value().compiled.graph.size();
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (ms.size() >= 5 && std::chrono::duration<double>(t1 - begin).count() >= seconds_per_case) break;
      }
      std::sort(ms.begin(), ms.end());
      rows.push_back(PipelineBenchRow{name, p, m, ops, static_cast<int>(ms.size()), ms[ms.size() / 2], ms.front()});
    }
  }
  return rows;
}

}  // namespace gantry
