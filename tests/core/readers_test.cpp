#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "core/graph_io.hpp"
#include "core/hex.hpp"

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

TEST_CASE("the DOPPLER writer gives back the shipped FFNN file's costs and edges", "[core]") {
  const std::string path = kData + "/doppler/ffnn_192nodes.txt";
  const Graph original = read_graph_file(path).value();
  auto text = graph_to_doppler(original);
  REQUIRE(text.ok());
  const Graph back = read_graph_doppler(text.value(), "written").value();
  REQUIRE(back.size() == original.size());
  REQUIRE(back.num_edges() == original.num_edges());
  for (EdgeId e = 0; e < original.num_edges(); ++e) {
    CHECK(back.edge_src(e) == original.edge_src(e));
    CHECK(back.edge_dst(e) == original.edge_dst(e));
  }
  // The cost lines as the file itself has them: the last N lines, "comp,comm[,type]".
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  const std::size_t first = lines.size() - static_cast<std::size_t>(original.size());
  for (OpId op = 0; op < back.size(); ++op) {
    const std::string& line = lines[first + op];
    const auto comma = line.find(',');
    INFO(line);
    CHECK(back.cost(op) == std::stod(line.substr(0, comma)));
    CHECK(back.transfer_cost(op) == std::stod(line.substr(comma + 1)));
    CHECK(back.kind(op) == original.kind(op));
  }
  // A graph priced from flops and bytes has no DOPPLER costs to write.
  GraphBuilder physical("physical");
  OpSpec op;
  op.name = "mm";
  op.flops = 10;
  physical.add_op(op);
  auto refused = graph_to_doppler(physical.build().value());
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("op 0 (mm)") && Catch::Contains("costs=doppler"));
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
    CHECK_THAT(g.error().message, Catch::StartsWith("ids.txt:4: edge 0: node id 7 is not a compute node"));
  }
  SECTION("a node id past 2^32 is refused, not wrapped") {
    auto g = read_graph_doppler("3\n\n0, 1\n1, 4294967298\n10,40\n20,80\n30,120\n", "wrap.txt");  // 2^32 + 2
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::StartsWith("wrap.txt:4: edge 1: node id 4294967298 is not a compute node"));
  }
  SECTION("a UTF-8 byte-order mark before the first line is skipped") {
    auto g = read_graph_doppler("\xEF\xBB\xBF" "3\n\n0, 1\n1, 2\n10,40\n20,80\n30,120\n", "bom.txt");
    REQUIRE(g.ok());
    CHECK(g.value().size() == 3);
  }
  SECTION("a minus sign in a line of ids is an error, not a separator") {
    auto g = read_graph_doppler("-3\n\n0, 1\n1, 2\n10,40\n20,80\n30,120\n", "minus.txt");
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::StartsWith("minus.txt:1: '-' in a line of node ids"));
  }
  SECTION("op types: the gdp files' words, each read as its kind; any other refused") {
    auto g = read_graph_doppler("3\n\n0, 1\n1, 2\n10,40,einsummable\n20,80,formation\n30,120,squeezer\n", "types.txt");
    REQUIRE(g.ok());
    CHECK(g.value().kind(0) == OpKind::matmul);
    CHECK(g.value().kind(1) == OpKind::formation);
    CHECK(g.value().kind(2) == OpKind::custom);
    auto typo = read_graph_doppler("2\n\n0\n1\n10,40,einsumable\n20,80\n", "typo.txt");
    REQUIRE_FALSE(typo.ok());
    CHECK_THAT(typo.error().message, Catch::StartsWith("typo.txt:5: unknown op type 'einsumable' (known: input,"));
  }
  SECTION("cycle") {
    auto g = read_graph_doppler("2\n\n0,1\n1,0\n5,20\n1,1\n", "cycle.txt");
    REQUIRE_FALSE(g.ok());
    // The edges (lines 3 and 4) make the cycle, not the cost lines.
    CHECK_THAT(g.error().message, Catch::StartsWith("cycle.txt:3: the graph has a cycle: n0 -> n1 -> n0"));
  }
}

TEST_CASE("STG errors name the file and line", "[core]") {
  auto g = read_graph_stg("2\n0 0 0\n1 3 1 0\n2 -4 1 1\n3 0 1 2\n", "neg.stg");
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(g.error().message, Catch::Contains("neg.stg:4") && Catch::Contains("negative"));
  auto missing = read_graph_file(kData + "/no/such/file.stg");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("file.stg: cannot read: No such file or directory"));
  auto directory = read_graph_file(kData + "/stg");
  REQUIRE_FALSE(directory.ok());
  CHECK_THAT(directory.error().message, Catch::Contains("is a directory"));
  auto directory_json = read_graph_file(kData + "/stg/x.json");  // a missing file under a real folder
  REQUIRE_FALSE(directory_json.ok());
  CHECK_THAT(directory_json.error().message, Catch::Contains("No such file"));
}

TEST_CASE("an STG dummy entry or exit that costs something is refused, not dropped", "[core]") {
  // The file's optimum counts every task's cost: dropping a dummy's would lower the makespan under it.
  auto entry = read_graph_stg("2\n0 5 0\n1 3 1 0\n2 4 1 1\n3 0 1 2\n", "entry.stg");
  REQUIRE_FALSE(entry.ok());
  CHECK(entry.error().message == "entry.stg:2: task 0 is the dummy entry, which costs 0 in STG (found 5)");
  auto exit = read_graph_stg("2\n0 0 0\n1 3 1 0\n2 4 1 1\n3 7 1 2\n", "exit.stg");
  REQUIRE_FALSE(exit.ok());
  CHECK(exit.error().message == "exit.stg:5: task 3 is the dummy exit, which costs 0 in STG (found 7)");
}

TEST_CASE("an STG line must list exactly its predecessor count", "[core]") {
  // Task 2 says one predecessor but lists two: the second edge would be dropped silently.
  auto more = read_graph_stg("3\n0 0 0\n1 3 1 0\n2 4 1 1 0\n3 2 1 2\n4 0 1 3\n", "more.stg");
  REQUIRE_FALSE(more.ok());
  CHECK_THAT(more.error().message, Catch::Contains("more.stg:4: task 2 says it has 1 predecessors but the line lists more"));
  auto cycle = read_graph_stg("2\n0 0 0\n1 3 1 2\n2 4 1 1\n3 0 1 2\n", "cycle.stg");
  REQUIRE_FALSE(cycle.ok());
  // Task names only (t1, t2), never the internal op indices alongside; edge t1 -> t2 is on line 4.
  CHECK_THAT(cycle.error().message, Catch::Contains("cycle.stg:4: the graph has a cycle: t1 -> t2 -> t1 (edges on lines 4 3)"));
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
  // The fingerprint earlier versions stored this graph's results under: graphs without operations
  // keep it (a store keeps meeting them).
  CHECK(fingerprint(g.value()).hex() == "b4940b21fd382197bfce3c8d53f49eec");
}

TEST_CASE("gantry JSON errors name the path into the document", "[core]") {
  auto bad_kind = read_graph_json(R"({"ops":[{"kind":"warp"}]})", "k.json");
  REQUIRE_FALSE(bad_kind.ok());
  CHECK_THAT(bad_kind.error().message, Catch::Contains("k.json: $.ops[0].kind") && Catch::Contains("warp"));
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

TEST_CASE("gantry JSON refuses what it would otherwise ignore", "[core]") {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"ops":[{"cots":5}]})", "u.json: $.ops[0].cots: unknown field (known: id, name, kind"},
      {R"({"ops":[{}], "edgez":[]})", "u.json: $.edgez: unknown field"},
      {R"({"ops":[{},{}], "edges":[{"src":0,"dst":1,"byte":4}]})", "u.json: $.edges[0].byte: unknown field"},
      {R"({"version":2,"ops":[{}]})", "u.json: $.version: 2 is not supported"},
      {R"({"format":"onnx","ops":[{}]})", "u.json: $.format: \"onnx\" is not a gantry-graph file"},
      {R"({"format":7,"ops":[{}]})", "u.json: $.format: 7 is not a gantry-graph file"},
      {R"({"cost_unit":"parsecs","ops":[{}]})", "u.json: $.cost_unit: unknown unit 'parsecs'"},
      {R"({"ops":[{},{},{}],"edges":[[0,1,2]]})", "u.json: $.edges[0]: an edge array has exactly two entries"},
      {R"({"ops":[{"name":7}]})", "u.json: $.ops[0].name is not a string"},
      {R"({"ops":[{"kind":3}]})", "u.json: $.ops[0].kind is not a string"},
      {R"({"ops":[{"shape":[2,"x"]}]})", "u.json: $.ops[0].shape[1] is not a non-negative integer"},
  };
  for (const auto& [text, expected] : cases) {
    auto g = read_graph_json(text, "u.json");
    INFO(text);
    REQUIRE_FALSE(g.ok());
    CHECK_THAT(g.error().message, Catch::StartsWith(expected));
    CHECK_THAT(g.error().message, !Catch::Contains("json.exception"));
  }
  CHECK(read_graph_json(R"({"format":"gantry-graph","version":1,"cost_unit":"ms","ops":[{"cost":1}]})", "ok.json").ok());
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

TEST_CASE("hex text: digits of either case, lower-case output, high word and nibble first", "[core]") {
  const Fingerprint known{0x0123456789abcdefull, 0xfedcba9876543210ull};
  CHECK(known.hex() == "0123456789abcdeffedcba9876543210");
  Fingerprint back;
  REQUIRE(Fingerprint::from_hex("0123456789ABCDEFfedcba9876543210", back));
  CHECK(back == known);
  CHECK(hex_digit('0') == 0);
  CHECK(hex_digit('9') == 9);
  CHECK(hex_digit('a') == 10);
  CHECK(hex_digit('F') == 15);
  for (char c : {'g', 'G', '/', ':', '@', '`', ' ', '\0'}) CHECK(hex_digit(c) == -1);
  CHECK(hex_encode(std::string("\x00\x7f\x80\xff", 4)) == "007f80ff");
  CHECK(all_hex_digits("00aBc9"));
  CHECK_FALSE(all_hex_digits(""));
  CHECK_FALSE(all_hex_digits("12x4"));
}

TEST_CASE("an STG predecessor count is not trusted to size anything", "[core]") {
  // N = 50,000,000 and a task claiming 50,000,001 predecessors on a line that lists one: an error
  // at that line, found without allocating for the claimed count.
  auto g = read_graph_stg("50000000\n0 0 0\n1 0 50000001 0\n", "huge.stg");
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(g.error().message, Catch::Contains("huge.stg:3: task 1 lists fewer than 50000001 predecessors"));
}
