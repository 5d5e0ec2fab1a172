#include "bench/pipeline_bench.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>

#include "sim/pipeline_evaluator.hpp"
#include "sim/pipeline_simulation.hpp"
#include "tuner/pipeline/list_scheduler.hpp"
#include "tuner/pipeline/pipeline_candidate.hpp"
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

// `chunks` stages per device on `devices` devices (interleaved), their costs, with a memory limit
// that binds and the first half of the stages offloading half of their activations: what the
// tuner's list scheduler sees on memory-bound models (nemotron-h-47b at p=16).
std::pair<PipelineScheme, StageCosts> offloading_shape(int devices, int chunks, int m) {
  PipelineScheme shape;
  shape.num_microbatches = m;
  const int stages = devices * chunks;
  for (int s = 0; s < stages; ++s) shape.placement.push_back(s % devices);
  shape.schedule.resize(devices);
  StageCosts c = bench_costs(stages);
  c.max_mem.assign(devices, chunks * 100 + 10.0 * devices);  // static memory, and about `devices` microbatches' activations
  c.host_bandwidth.assign(stages, 20);
  for (int s = 0; s < stages / 2; ++s)
    if (!offload_stage(c, s, 0.5)) throw std::runtime_error("bench pipeline: offload_stage failed");
  return {shape, c};
}

// Runs `once` (which returns the op count) at least 5 times and for `seconds`; the row's times.
PipelineBenchRow time_runs(const std::function<int()>& once, double seconds) {
  std::vector<double> ms;
  int ops = 0;
  const auto begin = std::chrono::steady_clock::now();
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    ops = once();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    if (ms.size() >= 5 && std::chrono::duration<double>(t1 - begin).count() >= seconds) break;
  }
  std::sort(ms.begin(), ms.end());
  PipelineBenchRow row;
  row.ops = ops;
  row.runs = static_cast<int>(ms.size());
  row.median_ms = ms[ms.size() / 2];
  row.min_ms = ms.front();
  return row;
}

}  // namespace

std::vector<PipelineBenchRow> run_pipeline_bench(const std::vector<std::pair<int, int>>& sizes, double seconds_per_case) {
  std::vector<PipelineBenchRow> rows;
  for (auto [p, m] : sizes) {
    StageCosts costs = bench_costs(p);
    for (const std::string name : {"1f1b", "zb"}) {
      auto choice = schedule_registry().find(name);  // one stage per device: `costs` fit both
      if (!choice) throw std::runtime_error(choice.error().message);
      auto built = choice.value().kind->build(p, m, choice.value().layout, costs);
      if (!built) throw std::runtime_error(built.error().message);
      const PipelineScheme scheme = std::move(built).value();
      PipelineRunInfo info;
      info.record = true;  // what a report needs
      PipelineBenchRow full = time_runs(
          [&] {
            auto r = simulate_pipeline(scheme, costs, info);  // compile + simulate + metrics
            if (!r || !r.value().completed) throw std::runtime_error("bench pipeline: the scheme did not run");
            return r.value().compiled.graph.size();
          },
          seconds_per_case);
      auto compiled = PipelineEvaluator::compile(scheme);
      if (!compiled) throw std::runtime_error(compiled.error().message);
      PipelineEvaluator evaluator = std::move(compiled).value();
      PipelineEvaluation result;
      int run = 0;
      PipelineBenchRow fast = time_runs(
          [&] {
            costs.f[0] = ++run % 2 ? 1.01 : 1.0;  // the search changes costs or orders between evaluations
            auto ok = evaluator.evaluate(scheme, costs, LinkModel::contention, result);
            if (!ok || !result.completed) throw std::runtime_error("bench pipeline: the evaluator did not run the scheme");
            return full.ops;
          },
          seconds_per_case);
      for (PipelineBenchRow* row : {&full, &fast}) {
        row->schedule = name;
        row->engine = row == &full ? "full" : "evaluator";
        row->stages = p;
        row->microbatches = m;
        rows.push_back(*row);
      }
    }
    // The orders behind each of the tuner's evaluations that has none (most of its time).
    const int chunks = 3;
    auto [shape, offloading] = offloading_shape(p, chunks, m);
    const ListScheduleRules rules = default_rules(shape.placement, p);
    PipelineBenchRow orders = time_runs(
        [&, &shape = shape, &offloading = offloading] {
          auto r = pipeline_list_schedule(shape, offloading, rules);
          if (!r) throw std::runtime_error("bench pipeline: " + r.error().message);
          return 3 * chunks * p * m;
        },
        seconds_per_case);
    orders.schedule = "zb, 3 chunks, offload";
    orders.engine = "list scheduler";
    orders.stages = chunks * p;
    orders.microbatches = m;
    rows.push_back(orders);
  }
  return rows;
}

}  // namespace gantry
