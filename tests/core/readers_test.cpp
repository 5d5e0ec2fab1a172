#include <catch2/catch.hpp>

#include "core/fingerprint.hpp"
#include "core/graph_io.hpp"

using namespace gantry;

namespace {
const std::string kData = GANTRY_TEST_DATA;
}

TEST_CASE("the DOPPLER FFNN graph reads with its costs", "[core]") {
  auto g = read_graph_file(kData + "/doppler/ffnn_192nodes.txt");
  REQUIRE(g.ok());
  CHECK(g.value().size() == 180);
  CHECK(g.value().num_edges() == 208);
  // First cost line: comp 2^36, comm 2^38 (comm = 4 comp in every shipped DOPPLER graph).
  CHECK(g.value().cost(0) == 68719476736.0);
  CHECK(g.value().transfer_cost(0) == 274877906944.0);
  CHECK(g.value().cost_unit() == "units");
}

TEST_CASE("STG graphs drop the dummy entry and exit", "[core]") {
  auto g = read_graph_file(kData + "/stg/50/rand0000.stg");
  REQUIRE(g.ok());
  CHECK(g.value().size() == 50);
  CHECK(g.value().cost(0) == 9);  // task 1 costs 9
  CHECK(g.value().name(0) == "t1");
}

TEST_CASE("DOPPLER text errors name the file and line", "[core]") {
  SECTION("bad cost") {
    auto g = read_graph_doppler("3\n0\n0\n1\n5,20\nx,1\n", "bad.txt");
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("bad.txt:6") && Catch::Contains("not a number"));
  }
  SECTION("negative cost") {
    auto g = read_graph_doppler("2\n\n0\n1\n5,20\n-1,1\n", "neg.txt");
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("neg.txt:6") && Catch::Contains("negative"));
  }
  SECTION("unknown node id") {
    auto g = read_graph_doppler("2\n\n0\n7\n5,20\n1,1\n", "ids.txt");
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("ids.txt") && Catch::Contains("unknown op id 7"));
  }
  SECTION("cycle") {
    auto g = read_graph_doppler("2\n\n0,1\n1,0\n5,20\n1,1\n", "cycle.txt");
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::Contains("cycle.txt:5") && Catch::Contains("cycle"));
  }
}

TEST_CASE("STG errors name the file and line", "[core]") {
  auto g = read_graph_stg("2\n0 0 0\n1 3 1 0\n2 -4 1 1\n3 0 1 2\n", "neg.stg");
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(g.error().message, Catch::Contains("neg.stg:4") && Catch::Contains("negative"));
  auto missing = read_graph_file(kData + "/no/such/file.stg");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("cannot open"));
}

TEST_CASE("gantry JSON graphs round-trip with the same fingerprint", "[core]") {
  auto g = read_graph_file(kData + "/doppler/ffnn_192nodes.txt");
  REQUIRE(g.ok());
  const std::string text = graph_to_json(g.value());
  auto back = read_graph_json(text, "roundtrip.json");
  REQUIRE(back.ok());
  CHECK(back.value().size() == g.value().size());
  CHECK(back.value().num_edges() == g.value().num_edges());
  CHECK(fingerprint(back.value()) == fingerprint(g.value()));
}

TEST_CASE("gantry JSON errors name the path into the document", "[core]") {
  auto bad_kind = read_graph_json(R"({"ops":[{"kind":"warp"}]})", "k.json");
  REQUIRE_FALSE(bad_kind.ok());
  CHECK_THAT(bad_kind.error().message, Catch::Contains("k.json: ops[0].kind") && Catch::Contains("warp"));
  auto nan_cost = read_graph_json(R"({"ops":[{"cost":"fast"}]})", "c.json");
  REQUIRE_FALSE(nan_cost.ok());
  CHECK_THAT(nan_cost.error().message, Catch::Contains("ops[0].cost is not a number"));
  auto neg = read_graph_json(R"({"ops":[{"cost":-2}]})", "n.json");
  REQUIRE_FALSE(neg.ok());
  CHECK_THAT(neg.error().message, Catch::Contains("negative"));
  auto edge = read_graph_json(R"({"ops":[{},{}],"edges":[[0,5]]})", "e.json");
  REQUIRE_FALSE(edge.ok());
  CHECK_THAT(edge.error().message, Catch::Contains("edges[0]") && Catch::Contains("unknown op id 5"));
  auto syntax = read_graph_json("{\"ops\": [", "s.json");
  REQUIRE_FALSE(syntax.ok());
  CHECK_THAT(syntax.error().message, Catch::Contains("s.json: invalid JSON") && Catch::Contains("line"));
  auto empty = read_graph_json(R"({"ops":[]})", "z.json");
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.error().message, Catch::Contains("empty"));
}

TEST_CASE("fingerprints ignore names and see costs", "[core]") {
  GraphBuilder a("a"), b("b"), c("c");
  auto matmul = [](const std::string& name, double flops) {
    OpSpec op;
    op.name = name;
    op.kind = OpKind::matmul;
    op.flops = flops;
    return op;
  };
  a.add_op(matmul("x", 10));
  b.add_op(matmul("y", 10));
  c.add_op(matmul("x", 11));
  CHECK(fingerprint(a.build().value()) == fingerprint(b.build().value()));
  CHECK(fingerprint(a.build().value()) != fingerprint(c.build().value()));
  const Fingerprint fp = fingerprint(a.build().value());
  CHECK(fp.hex().size() == 32);
  Fingerprint back;
  REQUIRE(Fingerprint::from_hex(fp.hex(), back));
  CHECK(back == fp);
  CHECK_FALSE(Fingerprint::from_hex(fp.hex().substr(0, 31) + "z", back));
  CHECK_FALSE(Fingerprint::from_hex(" " + fp.hex().substr(1), back));
  CHECK_FALSE(Fingerprint::from_hex(fp.hex().substr(1), back));
}
