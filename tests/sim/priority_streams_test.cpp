// Priority dispatch on devices with several streams: schedules worked out by hand from the rules in
// sim/sim_options.hpp (a free stream takes the ready op of highest priority; equal priorities go
// in the order the ops became ready; everything that happens at one instant is seen before the
// streams are handed out).
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "sim/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace gantry;
using gantry::testing::make_graph;
using gantry::testing::op;
using gantry::testing::unit_cluster;

namespace {

struct Expected {
  const char* name;
  double start, end;
};

// Runs `placement` with priority dispatch and checks every op's start and end, then the makespan.
void check_schedule(const Graph& g, const Cluster& cluster, SimOptions options, const Placement& placement,
                    const std::vector<Expected>& expected, double makespan) {
  CostTable costs(g, cluster);
  options.dispatch = Dispatch::priority;
  options.record = true;
  Simulator sim(g, costs, cluster, options);
  const SimResult result = sim.run(placement);
  REQUIRE(result.completed);
  REQUIRE(expected.size() == static_cast<std::size_t>(g.size()));
  for (OpId id = 0; id < g.size(); ++id) {
    INFO(g.name(id));
    CHECK(g.name(id) == expected[id].name);
    CHECK(result.ops[id].start == expected[id].start);
    CHECK(result.ops[id].end == expected[id].end);
  }
  CHECK(result.makespan == makespan);
  CHECK(sim.makespan(placement.device.data(), placement.priority.data()) == makespan);
}

}  // namespace

TEST_CASE("priority dispatch on two streams: priorities first, ties by readiness", "[sim]") {
  // One device with two streams. Sources A, B, C, D, E (ready at 0 in id order); F after D, G after
  // B. (cost, priority): A (3,1) B (2,5) C (2,5) D (1,9) F (2,1) E (4,1) G (1,8).
  //   t=0: ready A B C D E. D (9) takes a stream, then B and C tie at 5: B, ready first.
  //   t=1: D ends, F ready. Ready A C E F: C (5).
  //   t=2: B ends, G ready. Ready A E F G: G (8), which became ready at this very instant.
  //   t=3: C and G end, two streams. Ready A E F, all 1: A and E (ready at 0, before F at 1), even
  //        though F has the smaller id.
  //   t=6: A ends: F. t=7: E ends. t=8: F ends.
  // FIFO would have started A and B at 0.
  const Graph g = make_graph("two_streams", {{"A", 3}, {"B", 2}, {"C", 2}, {"D", 1}, {"F", 2}, {"E", 4}, {"G", 1}},
                             {{3, 4, 0}, {1, 6, 0}});  // D -> F, B -> G
  const Placement placement{{0, 0, 0, 0, 0, 0, 0}, {1, 5, 5, 9, 1, 1, 8}};
  const std::vector<Expected> expected = {{"A", 3, 6}, {"B", 0, 2}, {"C", 1, 3}, {"D", 0, 1},
                                          {"F", 6, 8}, {"E", 3, 7}, {"G", 2, 3}};
  check_schedule(g, unit_cluster(1, 2), SimOptions{}, placement, expected, 8);
}

TEST_CASE("priority dispatch on three streams: ops tied on priority go in readiness order", "[sim]") {
  // One device, three streams from --streams (the cluster says one). (cost, priority):
  // S1 (1,9) S2 (1,9) S3 (4,9) M (1,0); K0, K1 (2,3) after S2; K2, K3 (2,3) after S1; L (1,5) after S3.
  //   t=0: ready S1 S2 S3 M: S1, S2, S3 (9) take the three streams, in that order; M waits.
  //   t=1: S1 ends before S2 (it started first): K2 and K3 become ready, then K0 and K1. Two free
  //        streams, four ops tied at 3: K2 and K3, ready first although K0 and K1 have smaller ids.
  //   t=3: K2, K3 end: K0, K1 (3) before M (0).
  //   t=4: S3 ends, L ready: L (5) before M (0).
  //   t=5: K0, K1 and L end: M. t=6: M ends.
  const Graph g = make_graph(
      "three_streams",
      {{"S1", 1}, {"S2", 1}, {"S3", 4}, {"M", 1}, {"K0", 2}, {"K1", 2}, {"K2", 2}, {"K3", 2}, {"L", 1}},
      {{1, 4, 0}, {1, 5, 0}, {0, 6, 0}, {0, 7, 0}, {2, 8, 0}});  // S2 -> K0, K1; S1 -> K2, K3; S3 -> L
  const Placement placement{std::vector<std::int32_t>(9, 0), {9, 9, 9, 0, 3, 3, 3, 3, 5}};
  const std::vector<Expected> expected = {{"S1", 0, 1}, {"S2", 0, 1}, {"S3", 0, 4}, {"M", 5, 6}, {"K0", 3, 5},
                                          {"K1", 3, 5}, {"K2", 1, 3}, {"K3", 1, 3}, {"L", 4, 5}};
  SimOptions options;
  options.streams = 3;
  check_schedule(g, unit_cluster(1, 1), options, placement, expected, 6);
}

TEST_CASE("priority dispatch weighs an op arriving by transfer against local ready ops", "[sim]") {
  // Two devices with two streams each, unit links (2 bytes take 2 time units). U (1,0) on device 0
  // sends 2 bytes to V (1,7) on device 1, where H1, H2 (3,1) and J1, J2 (1,1) are sources.
  //   t=0: device 0 runs U; device 1 runs H1 and H2 (ready before J1, J2); J1, J2 wait.
  //   t=1: U ends, its output leaves for device 1 and arrives at 1 + 2 = 3.
  //   t=3: H1 and H2 end and V arrives, all at one instant: two streams, ready J1 J2 (1) and V (7):
  //        V and J1. t=4: J2. t=5: J2 ends.
  const Graph g = make_graph("arrival", {{"U", 1}, {"V", 1}, {"H1", 3}, {"H2", 3}, {"J1", 1}, {"J2", 1}},
                             {{0, 1, 2}});  // U -> V across the link
  const Placement placement{{0, 1, 1, 1, 1, 1}, {0, 7, 1, 1, 1, 1}};
  const std::vector<Expected> expected = {{"U", 0, 1},  {"V", 3, 4},  {"H1", 0, 3},
                                          {"H2", 0, 3}, {"J1", 3, 4}, {"J2", 4, 5}};
  check_schedule(g, unit_cluster(2, 2), SimOptions{}, placement, expected, 5);
}
