#include <catch2/catch.hpp>

#include "core/fingerprint.hpp"
#include "core/graph.hpp"
#include "core/graph_io.hpp"

using namespace gantry;

namespace {

// x (a graph input) and w (a parameter) multiplied, then added to itself through two edges.
GraphBuilder two_ops(int first_slot, int second_slot) {
  GraphBuilder b("ops.json");
  OpSpec mm;
  mm.name = "mm";
  Operation matmul;
  matmul.fn = TensorFn::matmul;
  matmul.operands = {Operand::input("x", {4, 6}, {{0, 0, 2}}), Operand::parameter("w", {6, 3}, 0.5)};
  mm.operation = matmul;
  b.add_op(mm);
  OpSpec sum;
  sum.name = "sum";
  Operation add;
  add.fn = TensorFn::add;
  add.operands = {Operand::edge(), Operand::edge({{1, 0, 2}})};
  sum.operation = add;
  b.add_op(sum);
  b.add_edge(0, 1, 0, first_slot);
  b.add_edge(0, 1, 0, second_slot);
  return b;
}

std::string error_of(const GraphBuilder& b) {
  auto g = b.build();
  REQUIRE_FALSE(g.ok());
  return g.error().message;
}

}  // namespace

TEST_CASE("edges bind the operands of an operation one to one", "[core]") {
  auto g = two_ops(1, 0).build();
  REQUIRE(g.ok());
  const Graph& graph = g.value();
  REQUIRE(graph.operation(0) != nullptr);
  CHECK(graph.operation(0)->fn == TensorFn::matmul);
  CHECK(graph.operation(0)->operands[1].scale == 0.5);
  CHECK(graph.edge_slot(0) == 1);
  CHECK(graph.edge_slot(1) == 0);

  CHECK_THAT(error_of(two_ops(0, 0)), Catch::Contains("operand slot 0 of sum is fed by two edges"));
  CHECK_THAT(error_of(two_ops(0, 2)), Catch::Contains("slot 2 is not an edge operand of sum"));
  CHECK_THAT(error_of(two_ops(0, -1)), Catch::Contains("slot -1 is not an edge operand"));

  GraphBuilder unbound = two_ops(0, 1);
  unbound.op(1).operation->operands.push_back(Operand::edge());
  CHECK_THAT(error_of(unbound), Catch::Contains("op sum: 3 edge operands but 2 edges feed it"));

  GraphBuilder no_operation = two_ops(0, 1);
  no_operation.op(1).operation.reset();
  CHECK_THAT(error_of(no_operation), Catch::Contains("has operand slot 0 but sum has no operation"));
}

TEST_CASE("fingerprints see what each op computes and which operand each edge feeds", "[core]") {
  const auto fingerprint_of = [](const GraphBuilder& b) {
    auto g = b.build();
    REQUIRE(g.ok());
    return fingerprint(g.value());
  };
  const Fingerprint base = fingerprint_of(two_ops(0, 1));
  CHECK(fingerprint_of(two_ops(0, 1)) == base);
  CHECK(fingerprint_of(two_ops(1, 0)) != base);  // the sliced operand of sum is the other edge

  GraphBuilder scaled = two_ops(0, 1);
  scaled.op(0).operation->operands[1].scale = 0.25;
  GraphBuilder other_weights = two_ops(0, 1);
  other_weights.op(0).operation->operands[1].name = "w2";
  GraphBuilder other_rows = two_ops(0, 1);
  other_rows.op(0).operation->operands[0].slices = {{0, 1, 3}};
  GraphBuilder half = two_ops(0, 1);
  half.op(0).operation->dtype = DType::bf16;
  GraphBuilder renamed = two_ops(0, 1);
  renamed.op(0).name = "product";
  CHECK(fingerprint_of(scaled) != base);
  CHECK(fingerprint_of(other_weights) != base);
  CHECK(fingerprint_of(other_rows) != base);
  CHECK(fingerprint_of(half) != base);
  CHECK(fingerprint_of(renamed) == base);  // names are not content
}

TEST_CASE("an operation with the wrong operands is refused, naming the op", "[core]") {
  GraphBuilder arity = two_ops(0, 1);
  arity.op(0).operation->operands.push_back(Operand::parameter("b", {3}, 1));
  CHECK_THAT(error_of(arity), Catch::Contains("op mm: matmul takes 2 operands, not 3"));

  GraphBuilder outside = two_ops(0, 1);
  outside.op(0).operation->operands[0].slices = {{1, 2, 7}};
  CHECK_THAT(error_of(outside), Catch::Contains("operand 0 (x): slice of dimension 1 up to 7 is outside its shape"));

  GraphBuilder empty_slice = two_ops(0, 1);
  empty_slice.op(1).operation->operands[1].slices = {{0, 3, 3}};
  CHECK_THAT(error_of(empty_slice), Catch::Contains("is not a non-empty range"));

  GraphBuilder ids = two_ops(0, 1);
  ids.op(0).operation->operands[0] = Operand::token_ids("t", {4, 6}, 10);
  CHECK_THAT(error_of(ids), Catch::Contains("matmul reads no integer ids there"));

  GraphBuilder pairs = two_ops(0, 1);
  pairs.op(1).operation->fn = TensorFn::attention;
  pairs.op(1).operation->operands = {Operand::edge(), Operand::edge(), Operand::edge({}), Operand::edge()};
  CHECK_THAT(error_of(pairs), Catch::Contains("odd number of operands"));
}

TEST_CASE("operations and slots are read from and written to gantry JSON", "[core]") {
  const std::string text = R"({"ops": [
      {"name": "e", "operation": {"fn": "embedding", "dtype": "bf16", "operands": [
          {"from": "input", "name": "tokens", "shape": [1, 8], "integer": true, "scale": 100, "slice": [[1, 0, 4]]},
          {"from": "param", "name": "table", "shape": [100, 16], "scale": 0.02}]}},
      {"name": "r", "operation": {"fn": "rope", "operands": [{}], "attrs": {"position": 4, "heads": 2}}}],
    "edges": [{"src": 0, "dst": 1, "slot": 0}]})";
  auto g = read_graph_json(text, "g.json");
  REQUIRE(g.ok());
  const Operation* embed = g.value().operation(0);
  REQUIRE(embed != nullptr);
  CHECK(embed->fn == TensorFn::embedding);
  CHECK(embed->dtype == DType::bf16);
  CHECK(embed->operands[0].source == Operand::Source::input);
  CHECK(embed->operands[0].integer);
  CHECK(embed->operands[0].scale == 100);
  CHECK(embed->operands[0].slices == std::vector<SliceRange>{{1, 0, 4}});
  CHECK(embed->operands[1].source == Operand::Source::parameter);
  CHECK(embed->operands[1].shape == std::vector<std::int64_t>{100, 16});
  const Operation* rope = g.value().operation(1);
  REQUIRE(rope != nullptr);
  CHECK(rope->dtype == DType::f32);
  CHECK(rope->attr("position", -1) == 4);
  CHECK(rope->attr("heads", -1) == 2);
  CHECK(rope->attr("theta", -1) == -1);
  CHECK(g.value().edge_slot(0) == 0);

  auto again = read_graph_json(graph_to_json(g.value()), "again.json");
  REQUIRE(again.ok());
  CHECK(*again.value().operation(0) == *embed);
  CHECK(*again.value().operation(1) == *rope);
  CHECK(again.value().edge_slot(0) == 0);

  auto bad_fn = read_graph_json(R"({"ops": [{"operation": {"fn": "conv", "operands": [{}]}}]})", "b.json");
  REQUIRE_FALSE(bad_fn.ok());
  CHECK_THAT(bad_fn.error().message, Catch::Contains("b.json: $.ops[0].operation.fn: unknown function 'conv'"));
  auto bad_from = read_graph_json(R"({"ops": [{"operation": {"fn": "relu", "operands": [{"from": "weights"}]}}]})", "b.json");
  REQUIRE_FALSE(bad_from.ok());
  CHECK_THAT(bad_from.error().message, Catch::Contains("$.ops[0].operation.operands[0].from: 'weights'"));
}
