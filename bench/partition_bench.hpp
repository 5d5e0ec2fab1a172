#pragma once
// `gantry bench partitions`: how well the simulator predicts D placement devices run as D
// partitions of one GPU (by streams, or by disjoint SM sets), from the runs `bench/gpu-check.sh`
// brings back from a GPU machine. Each graph's one-device run gives its ops' solo times (profiles
// of the device kind), the partitioned runs give the co-run slowdown (executor/co_run.hpp: the
// factor that explains the same ops' times alone and beside busy partitions) and the copies'
// times; every partitioned run is then simulated three ways: without the slowdown, with the factor
// fitted on every graph's runs (in sample), and with the factor and copies fitted on the other
// graphs' runs only (out of sample: what a profile taken before predicts of a graph it has not
// seen run on partitions). Streams and SM sets are separate device kinds with their own factors;
// where every graph also has a run of one of D SM sets working alone (gpu-check.sh's
// "-sms-ofD" runs), the D-set runs take their solo times from it: an SM set as a smaller GPU,
// the factor then only what busy neighbours add.
#include <string>
#include <vector>

namespace gantry {

struct PartitionRow {
  std::string graph, placement, mode;  // mode: "streams", "sms" or "sms-ofD" (solo times of one set of D)
  int devices = 0;
  double measured = 0;  // the run's median makespan, seconds
  double no_slowdown = 0, in_sample = 0, out_of_sample = 0;  // predicted makespans
  double out_of_sample_factor = 0;  // fitted without this graph's runs (0: no fit)
};

struct PartitionModeSummary {
  std::string mode;
  int runs = 0;
  double factor = 0;  // fitted on every graph (0: no fit)
  double no_slowdown_mean = 0, no_slowdown_p90 = 0;  // of |predicted / measured - 1|
  double in_sample_mean = 0, in_sample_p90 = 0;
  double out_of_sample_mean = 0, out_of_sample_p90 = 0;
};

struct PartitionReport {
  std::vector<PartitionRow> rows;
  std::vector<PartitionModeSummary> modes;
  std::vector<std::string> graphs;  // the graph files read
};

struct PartitionOptions {
  // bench/gpu-check.sh's layout: CASES/SET/gI.json (graphs) and gI-dD-METHOD.json (placements),
  // RUNS/SET-gI-dD-METHOD[-sms].json (gantry-exec's measurements) and RUNS/SET-gI-d1-single[-sms-ofD].json
  // (one device: the whole GPU, or one of D SM sets), I from 1.
  std::string cases, runs, set = "time";
};

// Throws std::runtime_error naming the file when the layout or a file is not as expected.
PartitionReport run_partition_bench(const PartitionOptions& options);

}  // namespace gantry
