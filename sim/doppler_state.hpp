#pragma once
// Internal to the DOPPLER-compatible engine: what it precomputes once per graph and the buffers it
// reuses on every run (no allocation per run).
//
// The edge processes come in the order networkx's MultiDiGraph.edges yields them (by source op,
// then destination in order of first appearance, parallel edges adjacent). For a repeated
// (src, dst) pair only the last process is waited on, as the public code keeps them in a dict
// keyed by (src, dst).
#include <cstdint>
#include <vector>

#include "core/graph.hpp"
#include "sim/event_queue.hpp"

namespace gantry {

struct DopplerState {
  DopplerState(const Graph& graph, int devices);

  // Edge processes.
  std::vector<OpId> dst;
  std::vector<EdgeId> edge;
  std::vector<char> awaited;
  std::vector<int> begin;        // per op, first edge process it feeds
  std::vector<int> distinct_in;  // per op, number of distinct predecessors

  // Per-run buffers.
  EventQueue future;                  // events after `now`, by (time, sequence)
  std::vector<std::int32_t> current;  // events at `now`, in the order they were scheduled
  std::vector<int> arrived;           // per op, awaited edge processes that ended
  std::vector<OpId> user;             // per device, the op holding it (-1: free)
  std::vector<OpId> waiting;          // per device, a FIFO segment of ops requesting it
  std::vector<int> seg_begin, head, tail;
  std::vector<double> busy;
};

}  // namespace gantry
