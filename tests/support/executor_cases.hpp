#pragma once
// A graph small enough to run in milliseconds on the CPU backend, and a placement that spreads it
// over every device: the executor tests' common case.
#include <catch2/catch.hpp>

#include "core/graph.hpp"
#include "core/placement.hpp"
#include "workloads/workload.hpp"

namespace gantry::testing {

inline Graph small_ffnn() {
  auto g = make_workload("ffnn:layers=3,blocks=3,batch=64,hidden=48");
  REQUIRE(g.ok());
  return std::move(g).value();
}

// Op i on device i mod `devices`: every edge between ops of different devices is a transfer.
inline Placement spread(const Graph& g, int devices) {
  Placement p;
  for (OpId op = 0; op < g.size(); ++op) p.device.push_back(op % devices);
  return p;
}

}  // namespace gantry::testing
