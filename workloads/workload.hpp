#pragma once
// Named dataflow workloads (the DOPPLER paper's CHAINMM, FFNN, LLAMA-BLOCK, LLAMA-LAYER and
// random layered DAGs) built as gantry::Graphs from a short spec:
//   "llama-layer"                      defaults
//   "chainmm:blocks=4,size=8192"       parameters override defaults
// Every parameter is a number; each workload lists its parameters with their defaults.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph.hpp"
#include "core/result.hpp"

namespace gantry {

// The numeric parameters of one generator, by key ("blocks" -> 4).
struct WorkloadParams {
  std::string workload;  // names the generator in error messages
  std::map<std::string, double> values;

  double get(const std::string& key, double fallback) const;
  bool has(const std::string& key) const { return values.count(key) > 0; }
  // An integer in [min, max]; the error names the workload, the key, the value and the bounds.
  Result<std::int64_t> get_int(const std::string& key, std::int64_t fallback, std::int64_t min,
                               std::int64_t max) const;
  // A finite real number in [min, max].
  Result<double> get_real(const std::string& key, double fallback, double min, double max) const;
};

struct WorkloadInfo {
  std::string name;
  std::string description;
  std::string params_help;  // every parameter with its default, e.g. "blocks=2 size=8192"
};

// A spec split into its workload name and parameters (not yet checked against the workload).
// `costs` is the one parameter that is a word, not a number, and every workload takes it:
// "physical" (the default: times from flops, bytes and the cluster) or "doppler" (DOPPLER's
// convention, workloads/doppler_costs.hpp).
struct WorkloadSpec {
  std::string name;
  WorkloadParams params;
  std::string costs = "physical";
};

const std::vector<WorkloadInfo>& workload_list();
// nullptr when no workload has that name ('_' and '-' are interchangeable).
const WorkloadInfo* find_workload(const std::string& name);
// The parameter keys a workload accepts, in the order of its params_help.
std::vector<std::string> workload_param_keys(const WorkloadInfo& info);

// "name" or "name:key=value,key=value" (and costs=physical|doppler). Malformed text, duplicate keys
// and non-numeric values are errors that quote the offending part.
Result<WorkloadSpec> parse_workload_spec(const std::string& spec);

// Builds a workload. Unknown names and parameters are errors listing the valid ones. `seed` feeds
// the workloads that take a `seed` parameter unless the spec sets it; seeds are exact up to 2^53.
Result<Graph> make_workload(const std::string& spec, std::uint64_t seed = 1);

}  // namespace gantry
