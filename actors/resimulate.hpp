#pragma once
// Re-simulating stored bests computed by an older simulator model (sim/model_version.hpp): each
// stale best is simulated again from the stored graph and cluster content and the record's
// simulator options, and stored under the current key (with its history entry). A maintenance job
// of the store that needs the simulator: it lives with the jobs, below the CLI.
#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "core/result.hpp"
#include "storage/store.hpp"

namespace gantry {

struct ResimulatedBest {
  std::string graph_label, cluster_name;
  Fingerprint graph, old_runtime, new_runtime;
  int old_version = 0;
  double old_makespan = 0, new_makespan = 0;
  bool stored = false;  // false: the current key already holds a best at least as good
  bool current = false; // the current key already held a best of this model version: not re-simulated
};

struct ResimulateReport {
  long stale = 0;        // bests of older model versions found
  long current = 0;      // of them, already superseded by a best of this version under the new key
  long resimulated = 0;  // of them, simulated again
  long stored = 0;       // of those, stored as the current best of their key
  std::vector<ResimulatedBest> items;
  std::vector<std::string> problems;  // stale bests that could not be re-simulated, and why
};

// `store` must be open for writing.
Result<ResimulateReport> resimulate_stale(Store& store);

}  // namespace gantry
