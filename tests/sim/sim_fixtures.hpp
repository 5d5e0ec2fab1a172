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

// `devices` devices with `streams` streams each and links of bandwidth 1 byte/unit and the given
// latency; with or without copy engines (Device::copy_engine).
inline Cluster unit_cluster(int devices, int streams = 1, bool copy_engine = true, double latency = 0) {
  std::vector<Device> list;
  for (int d = 0; d < devices; ++d) {
    list.push_back(Device{"d" + std::to_string(d), "unit", 1, 1, 1e9, streams, 0});
    list.back().copy_engine = copy_engine;
  }
  Cluster c("unit", list);
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b)
      if (a != b) c.set_link(a, b, Link{1, latency});
  return c;
}

}  // namespace gantry::testing
