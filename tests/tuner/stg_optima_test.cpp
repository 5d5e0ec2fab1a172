#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "core/graph_io.hpp"
#include "tuner/placement_method.hpp"
#include "tuner/stg_optima.hpp"

using namespace gantry;

TEST_CASE("the STG optima file reads proven optima and bounds", "[tuner]") {
  auto table = read_stg_optima(std::string(GANTRY_TEST_DATA) + "/stg/optimal/Case50_2_OPT.csv");
  REQUIRE(table.ok());
  CHECK(table.value().size() == 180);
  CHECK(table.value()[0].graph == "50/rand0000.stg");
  CHECK(table.value()[0].processors == 2);
  CHECK(table.value()[0].proven);
  CHECK(table.value()[0].lower == 131);
  const StgOptimum& open = table.value()[60];
  CHECK_FALSE(open.proven);
  CHECK(open.lower == 157);
  CHECK(open.upper == 165);
}

TEST_CASE("no method ever beats a proven optimum on the STG set", "[tuner][slow]") {
  const std::string root = std::string(GANTRY_TEST_DATA) + "/stg/";
  for (int procs : {2, 4, 8, 16}) {
    auto table = read_stg_optima(root + "optimal/Case50_" + std::to_string(procs) + "_OPT.csv");
    REQUIRE(table.ok());
    Cluster c = Cluster::identical(procs).value();
    for (std::size_t i = 0; i < table.value().size(); i += (procs == 2 ? 1 : 3)) {
      const StgOptimum& opt = table.value()[i];
      auto g = read_graph_file(root + opt.graph);
      REQUIRE(g.ok());
      CostTable costs(g.value(), c);
      SimOptions runtime;
      runtime.dispatch = Dispatch::priority;
      PlacementProblem problem{g.value(), c, costs, runtime};
      INFO(opt.graph << " on " << procs);
      PlacementOutcome heft = place_heft(problem);
      CHECK(heft.makespan >= opt.lower);
      CHECK(heft.planned >= opt.lower);
      CHECK(place_critical_path(problem).makespan >= opt.lower);
      if (i % 15 == 0) {
        SearchBudget budget;
        budget.seconds = 0;
        budget.evaluations = 2000;
        CHECK(place_search(problem, budget).makespan >= opt.lower);
      }
    }
  }
}
