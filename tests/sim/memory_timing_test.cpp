// The memory model's timing (docs/architecture.md), pinned by peaks worked out by hand: an op's
// output is allocated when it starts and freed when its last consumer finishes; a received copy is
// counted from the moment its producer finishes and sends it, even while the link is still busy.
#include <catch2/catch.hpp>

#include "sim/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace gantry;
using gantry::testing::op;
using gantry::testing::unit_cluster;

namespace {

OpSpec sized(const char* name, double cost, double output_bytes, double workspace = 0) {
  OpSpec spec = op(name, cost);
  spec.output_bytes = output_bytes;
  spec.memory = workspace;
  return spec;
}

std::vector<double> peaks(const Graph& g, const Cluster& cluster, const Placement& placement) {
  CostTable costs(g, cluster);
  SimOptions options;
  options.track_memory = true;
  Simulator sim(g, costs, cluster, options);
  const SimResult result = sim.run(placement);
  REQUIRE(result.completed);
  return result.peak_memory;
}

}  // namespace

TEST_CASE("memory: an output lives from its op's start to its last consumer's end", "[sim]") {
  // One device: X (out 10) -> Y (out 20) -> Z (workspace 25, out 0), one at a time.
  //   [0,1] X: 10.  [1,2] Y: 10 + 20 = 30.  Y ends: X's output goes (its only consumer is done): 20.
  //   [2,3] Z: 20 + 25 = 45.
  // Outputs kept to the end would give 55; outputs allocated at the op's end would give 35.
  GraphBuilder b("chain");
  b.add_op(sized("X", 1, 10));
  b.add_op(sized("Y", 1, 20));
  b.add_op(sized("Z", 1, 0, 25));
  b.add_edge(0, 1, 10);
  b.add_edge(1, 2, 20);
  const Graph g = b.build().value();
  CHECK(peaks(g, unit_cluster(1), Placement{{0, 0, 0}, {}}) == std::vector<double>{45});
}

TEST_CASE("memory: a received copy counts from its send, not from its transfer's start", "[sim]") {
  // Device 0 runs A (out 10) then B (out 4); device 1 runs W (cost 5, workspace 100), then C (after
  // A) and D (after B), both out 0. Unit links: 10 bytes take 10 units, one transfer at a time.
  //   t=1: A ends and sends to device 1; the transfer runs [1,11]. Device 1: 100 + 10 = 110.
  //   t=2: B ends and sends; the link is busy until 11, the transfer runs [11,15], and device 1
  //        counts the copy now: 114 while W still runs ([0,5]).
  //   Counted from the transfer start the peak would be 110, from the arrival 100.
  //   Device 0: A's 10 and B's 4 until C [11,12] and D [15,16] finish: 14.
  GraphBuilder b("busy_link");
  b.add_op(sized("A", 1, 10));
  b.add_op(sized("B", 1, 4));
  b.add_op(sized("W", 5, 0, 100));
  b.add_op(sized("C", 1, 0));
  b.add_op(sized("D", 1, 0));
  b.add_edge(0, 3, 10);
  b.add_edge(1, 4, 4);
  const Graph g = b.build().value();
  CHECK(peaks(g, unit_cluster(2), Placement{{0, 0, 1, 1, 1}, {}}) == std::vector<double>{14, 114});
}
