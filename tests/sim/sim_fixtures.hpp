#pragma once
// Small hand-built graphs and clusters for simulator tests.
#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "core/graph.hpp"

#include <utility>
#include <vector>

namespace gantry::testing {

// An op with an explicit cost (and optional explicit transfer cost).
inline OpSpec op(const std::string& name, double cost, double transfer = -1) {
  OpSpec spec;
  spec.name = name;
  spec.cost = cost;
  spec.transfer_cost = transfer;
  return spec;
}

struct EdgeBytes {
  int src, dst;
  double bytes;
};

// A graph of explicit-cost ops {name, cost} and edges {src, dst, bytes}.
inline Graph make_graph(const char* name, const std::vector<std::pair<const char*, double>>& ops,
                        const std::vector<EdgeBytes>& edges) {
  GraphBuilder b(name);
  for (const auto& [op_name, cost] : ops) b.add_op(op(op_name, cost));
  for (const EdgeBytes& e : edges) b.add_edge(e.src, e.dst, e.bytes);
  return b.build().value();
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
