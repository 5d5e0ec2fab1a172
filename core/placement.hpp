#pragma once
// A placement maps every op to a device. It may also carry dispatch priorities (higher runs
// first among ready ops on a device), which the work-conserving runtime honours when given.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gantry {

class Graph;
class Cluster;

struct Placement {
  std::vector<std::int32_t> device;  // op -> device index
  std::vector<double> priority;      // optional: op -> priority (empty = FIFO by readiness)

  int size() const { return static_cast<int>(device.size()); }
  bool has_priority() const { return !priority.empty(); }
  // Checks sizes, device indices and finite priorities against a graph and a device count (or a
  // cluster); the error names `source` and the first offending op.
  Status check(const Graph& graph, int devices, const std::string& source) const;
  Status check(const Graph& graph, const Cluster& cluster, const std::string& source) const;
};

// A placement as read from a file, with the fingerprint of the graph it was made for (empty when
// the file does not say), so that a placement for another graph is refused instead of simulated.
struct PlacementFile {
  Placement placement;
  std::string graph_fingerprint;
};

std::string placement_to_json(const Placement& placement, const std::string& graph_fingerprint,
                              const std::string& cluster_name, int indent = 2);
Result<PlacementFile> placement_from_json(const std::string& text, const std::string& source);
Result<PlacementFile> read_placement_file(const std::string& path);

}  // namespace gantry
