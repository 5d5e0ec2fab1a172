// The profiler's link ladder: every ordered device pair's link is timed over the ladder's sizes, so
// each pair gets its own latency and bandwidth fit.
#include <catch2/catch.hpp>

#include <set>

#include "core/cluster.hpp"
#include "executor/profiler.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

TEST_CASE("the profiler times every ordered device pair's link over the ladder's sizes", "[executor]") {
  auto cluster = Cluster::load("cpu-2");
  REQUIRE(cluster.ok());
  const std::string kind = cluster.value().device(0).kind;
  auto tiny = make_workload("chainmm:blocks=1,kblocks=1,size=16");
  REQUIRE(tiny.ok());
  std::vector<std::pair<std::string, Graph>> graphs;
  graphs.emplace_back("tiny", std::move(tiny).value());
  ProfilerOptions options;
  options.random_placements = 0;
  options.exec.repeats = 1;
  options.link_ladder = "link-ladder:min_bytes=4096,max_bytes=1048576";
  auto table = profile_cluster(cluster.value(), graphs, options);
  REQUIRE(table.ok());
  const std::set<double> ladder = {4096, 16384, 65536, 262144, 1048576};
  for (const auto& [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
    INFO(from << " -> " << to);
    std::set<double> sizes;
    for (const ProfileEntry& e : table.value().entries())
      if (e.device_kind == transfer_pair_kind(kind, kind, from, to)) sizes.insert(e.op.work);
    for (double bytes : ladder) CHECK(sizes.count(bytes) == 1);
    // Sizes spanning 256x: a line fitted by least squares, not the nominal bandwidth.
    auto fit = table.value().link(kind, kind, 0, std::pair{from, to});
    REQUIRE(fit.has_value());
    CHECK(fit->bandwidth > 0);
  }
  // Without a ladder, the one 16x16 tile transfer of the tiny graph cannot give a fit.
  options.link_ladder.clear();
  auto plain = profile_cluster(cluster.value(), graphs, options);
  REQUIRE(plain.ok());
  CHECK_FALSE(plain.value().link(kind, kind, 0, std::pair{0, 1}).has_value());
}
