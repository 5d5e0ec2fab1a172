#pragma once
// `gantry bench fidelity`: how well the simulator, calibrated by measured profiles, predicts real
// makespans. It profiles the cluster (executor/profiler.hpp), then measures and predicts random,
// heuristic and searched placements of chainmm, ffnn and llama-block graphs sized to run in
// 20-200 ms on cpu-2 (on this project's 2-core machine ffnn and llama-block take 45-120 ms, chainmm
// 140-380 ms), and reports each error and their mean and 90th percentile, beside the machine's own
// noise (odd rounds against even rounds).
#include <functional>
#include <string>
#include <vector>

namespace gantry {

struct FidelityRow {
  std::string graph, placement;
  double measured = 0, spread = 0, predicted = 0, roofline = 0;
  double error() const { return measured > 0 ? predicted / measured - 1 : 0; }
};

struct FidelityReport {
  std::vector<FidelityRow> rows;
  int profile_signatures = 0;
  double profile_seconds = 0;
  double co_run_slowdown = 1;  // the profile's, for the first device's kind
  double mean_error = 0, p90_error = 0;                   // of |error|
  double roofline_mean_error = 0, roofline_p90_error = 0;  // the uncalibrated model, for contrast
  // The machine's own disagreement: each placement's median over the odd rounds "predicting" its
  // median over the even rounds, as mean and 90th percentile of |error|. A simulator cannot be
  // expected to predict a measurement more closely than two measurements of it agree (these are of
  // half the rounds each, so a little wider than the full median's own noise).
  double noise_mean_error = 0, noise_p90_error = 0;
};

struct FidelityOptions {
  std::string cluster = "cpu-2";
  std::vector<std::string> graphs = {"ffnn:layers=4,blocks=3,batch=1024,hidden=1024", "chainmm:blocks=2,size=1536",
                                     "llama-block:blocks=4,seq=512,hidden=640,heads=10,ffn=1728,dtype_bytes=4"};
  // What to profile: "grid" (gantry profile's default workloads, none of the graphs' sizes),
  // "graphs" (the measured graphs themselves) or "both".
  std::string profile = "grid";
  int random_placements = 5;
  int repeats = 5;
  double search_seconds = 1;
  std::function<void(const std::string&)> progress;
};

FidelityReport run_fidelity_bench(const FidelityOptions& options);

}  // namespace gantry
