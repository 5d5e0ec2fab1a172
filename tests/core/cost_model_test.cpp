#include <catch2/catch.hpp>

#include "core/cost_model.hpp"

using namespace gantry;

TEST_CASE("roofline times: compute bound and memory bound", "[core]") {
  GraphBuilder b("roofline");
  OpSpec gemm, add;
  gemm.name = "gemm", gemm.kind = OpKind::matmul, gemm.flops = 2e12, gemm.bytes = 1e6;  // compute bound
  add.name = "add", add.kind = OpKind::elementwise, add.flops = 1e6, add.bytes = 8e9;   // memory bound
  b.add_op(gemm);
  b.add_op(add);
  b.add_edge(EdgeSpec{0, 1, 1e9, -1, 0});
  Graph g = b.build().value();
  Cluster c("one", {Device{"d0", "X", 10e12, 1e12, 1e10, 1, 0}, Device{"d1", "X", 10e12, 1e12, 1e10, 1, 0}});
  c.set_link(0, 1, Link{10e9, 1e-5});
  CostModelOptions options;
  CostTable t(g, c, options);
  CHECK(t.op_time(0, 0) == Approx(2e12 / (10e12 * 0.7) + 5e-6));
  CHECK(t.op_time(1, 0) == Approx(8e9 / (1e12 * 0.8) + 5e-6));
  CHECK(t.transfer_time(0, 0, 1) == Approx(1e-5 + 0.1));
  CHECK(t.transfer_time(0, 1, 0) == 0);  // no link set: free
  CHECK(t.transfer_time(0, 0, 0) == 0);
}

TEST_CASE("explicit costs win, per device kind first", "[core]") {
  GraphBuilder b("explicit");
  OpSpec op;
  op.name = "t";
  op.flops = 1e15;
  op.cost = 7;
  op.cost_by_kind = {{"fast", 2}};
  op.transfer_cost = 3;
  b.add_op(op);
  OpSpec u;
  u.name = "u";
  u.cost = 1;
  b.add_op(u);
  b.add_edge(0, 1, 1e12);
  Graph g = b.build().value();
  Cluster c("mixed", {Device{"a", "slow", 1e12, 1e12, 1, 1, 0}, Device{"b", "fast", 1e12, 1e12, 1, 1, 0}});
  c.set_link(0, 1, Link{1e9, 0});
  CostTable t(g, c);
  CHECK(t.op_time(0, 0) == 7);
  CHECK(t.op_time(0, 1) == 2);
  CHECK(t.transfer_time(0, 0, 1) == 3);  // the producer's explicit transfer cost beats bytes/bandwidth
  CHECK(t.min_op_time(0) == 2);
  CHECK(t.mean_op_time(0) == Approx(4.5));
}
