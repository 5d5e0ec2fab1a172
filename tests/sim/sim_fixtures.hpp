#pragma once
// Small hand-built graphs and clusters for simulator tests.
#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/graph.hpp"

namespace gantry::testing {

// An op with an explicit cost (and optional explicit transfer cost).
inline OpSpec op(const std::string& name, double cost, double transfer = -1) {
  OpSpec spec;
  spec.name = name;
  spec.cost = cost;
  spec.transfer_cost = transfer;
  return spec;
}

// `devices` devices with `streams` streams each and links of bandwidth 1 byte/unit (latency 0).
inline Cluster unit_cluster(int devices, int streams = 1) {
  std::vector<Device> list;
  for (int d = 0; d < devices; ++d) list.push_back(Device{"d" + std::to_string(d), "unit", 1, 1, 1e9, streams, 0});
  Cluster c("unit", list);
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b)
      if (a != b) c.set_link(a, b, Link{1, 0});
  return c;
}

}  // namespace gantry::testing
