#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "core/graph.hpp"

using namespace gantry;

namespace {
GraphBuilder diamond() {
  GraphBuilder b("diamond.json");
  for (int i = 0; i < 4; ++i) {
    OpSpec op;
    op.name = "v" + std::to_string(i);
    op.cost = 1.0 + i;
    b.add_op(op);
  }
  b.add_edge(0, 1);
  b.add_edge(0, 2);
  b.add_edge(1, 3);
  b.add_edge(2, 3);
  return b;
}
}  // namespace

TEST_CASE("a valid graph gets CSR lists and a topological order", "[core]") {
  auto g = diamond().build();
  REQUIRE(g.ok());
  const Graph& graph = g.value();
  CHECK(graph.size() == 4);
  CHECK(graph.num_edges() == 4);
  CHECK(graph.preds(3).size() == 2);
  CHECK(graph.succs(0).size() == 2);
  CHECK(graph.succs(0)[0] == 1);
  CHECK(graph.edge_src(graph.in_edges(3)[1]) == 2);
  std::vector<int> position(4);
  for (int i = 0; i < 4; ++i) position[graph.topo_order()[i]] = i;
  for (EdgeId e = 0; e < graph.num_edges(); ++e) CHECK(position[graph.edge_src(e)] < position[graph.edge_dst(e)]);
}

TEST_CASE("graph validation names the problem", "[core]") {
  SECTION("empty graph") {
    auto g = GraphBuilder("empty.json").build();
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("empty.json") && Catch::Contains("empty"));
  }
  SECTION("unknown op id") {
    auto b = diamond();
    b.add_edge(EdgeSpec{1, 99, 0, -1, 7});
    auto g = b.build();
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("diamond.json:7") && Catch::Contains("unknown op id 99"));
  }
  SECTION("self loop") {
    auto b = diamond();
    b.add_edge(2, 2);
    auto g = b.build();
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("self loop"));
  }
  SECTION("cycle with its path") {
    auto b = diamond();
    b.add_edge(3, 1);
    auto g = b.build();
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("cycle") && Catch::Contains("v1 -> v3 -> v1"));
  }
  SECTION("negative cost") {
    auto b = diamond();
    b.op(2).cost = -3;
    auto g = b.build();
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("op v2: cost is negative"));
  }
  SECTION("NaN flops") {
    auto b = diamond();
    b.op(1).flops = std::numeric_limits<double>::quiet_NaN();
    auto g = b.build();
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("flops is not a finite number"));
  }
  SECTION("costs, each finite, that add up past the largest double") {
    auto b = diamond();
    b.op(0).cost = 1.7e308;
    b.op(3).cost = 1.7e308;  // 3.4e308 > DBL_MAX (1.8e308): the sum is inf
    auto g = b.build();
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("the sum of the ops' cost is inf"));
  }
  SECTION("edge bytes above the largest total") {
    auto b = diamond();
    b.add_edge(0, 3, 1e301);
    auto g = b.build();
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("the sum of the edges' bytes is 1e+301"));
  }
  SECTION("large totals within the limit build") {
    auto b = diamond();
    b.op(0).cost = 2e299;
    CHECK(b.build().ok());
  }
}
