#pragma once
// The YAML texts of configs/clusters/*.yaml, compiled into the binary.
#include <vector>

namespace gantry {

struct ClusterPreset {
  const char* name;
  const char* yaml;
};

const std::vector<ClusterPreset>& cluster_presets();

}  // namespace gantry
