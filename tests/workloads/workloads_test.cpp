#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "workloads/generators.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

namespace {

Graph build(const std::string& spec, std::uint64_t seed = 1) {
  auto graph = make_workload(spec, seed);
  INFO(spec << ": " << graph.error().message);
  REQUIRE(graph.ok());
  return std::move(graph).value();
}

std::string error_of(const std::string& spec) {
  auto graph = make_workload(spec);
  REQUIRE_FALSE(graph.ok());
  return graph.error().message;
}

double total_flops(const Graph& g) {
  double sum = 0;
  for (OpId op = 0; op < g.size(); ++op) sum += g.flops(op);
  return sum;
}

int count_kind(const Graph& g, OpKind kind) {
  int n = 0;
  for (OpId op = 0; op < g.size(); ++op) n += g.kind(op) == kind;
  return n;
}

// The analytic flops of Y = C.(D.E) + A.B (see chainmm.cpp).
double chainmm_flops(double n, double kblocks) { return 6 * n * n * n + (3 * kblocks - 2) * n * n; }

bool same_graph(const Graph& a, const Graph& b) {
  if (a.size() != b.size() || a.num_edges() != b.num_edges()) return false;
  for (OpId op = 0; op < a.size(); ++op)
    if (a.name(op) != b.name(op) || a.flops(op) != b.flops(op) || a.bytes(op) != b.bytes(op)) return false;
  for (EdgeId e = 0; e < a.num_edges(); ++e)
    if (a.edge_src(e) != b.edge_src(e) || a.edge_dst(e) != b.edge_dst(e) || a.edge_bytes(e) != b.edge_bytes(e))
      return false;
  return true;
}

// Op and edge counts from the formulas in each generator's header comment, written from the
// parameters (b = blocks, kb = kblocks, L = layers); none of these numbers comes from a build.
struct Counts {
  double ops, edges;
};

// chainmm.cpp: level sizes 2 b^2 kb + (kb b + b^2) + b^2 kb + b^2 ceil(kb/2) + kb b; edges: every
// de_sum reads kb partials (kb b sums), every ab_sum kb (b^2 sums), every cde_mm one de_sum, every
// partial of C.(DE) feeds one pair sum, every y_add reads ceil(kb/2) pair sums and one ab_sum.
Counts chainmm_counts(double b, double kb) {
  const double halves = std::ceil(kb / 2);
  return {2 * b * b * kb + (kb * b + b * b) + b * b * kb + b * b * halves + kb * b,
          kb * b * kb + b * b * kb + b * b * kb + b * b * kb + kb * b * (halves + 1)};
}

// ffnn.cpp: per layer b^3 matmuls, b^2 formations, b^2 relus; edges: b per formation, one per relu,
// and after the first layer one input tile per matmul.
Counts ffnn_counts(double layers, double b) {
  return {layers * (b * b * b + 2 * b * b), layers * (b * b * b + b * b) + (layers - 1) * b * b * b};
}

// llama_block.cpp: 4 b row ops (rmsnorm, resid1, rmsnorm2, resid2) and 11 b^2 block ops (q, k, v,
// rope_q, rope_k, attention, o_proj, gate, up, silu_mul, down), 13 b^2 with split attention.
// Edges with the input a graph input: q/k/v 3 b^2, ropes 2 b^2, fused attention of row block r
// reads q and r + 1 key and value blocks (b^2 + 2 b^2 (b + 1) / 2 = b^3 + 2 b^2 in all), o_proj b^2,
// resid1 b^2, rmsnorm2 b, gate/up 2 b^2, silu_mul 2 b^2, down b^2, resid2 b^2 + b; split attention
// adds a softmax edge and a second q/k-or-v edge per block: + 2 b^2. Fed by ops (inside
// llama-layer), rmsnorm and resid1 read the input rows: + 2 b.
Counts llama_block_counts(double b, bool fused, bool fed) {
  const double attention = fused ? b * b * b + 2 * b * b : b * b * b + 4 * b * b;
  return {4 * b + (fused ? 11 : 13) * b * b,
          3 * b * b + 2 * b * b + attention + b * b + b * b + b + 2 * b * b + 2 * b * b + b * b + b * b + b +
              (fed ? 2 * b : 0)};
}

// llama_layer.cpp: b embeds, L blocks, b final norms, b^2 logits, b^2 xent parts, b xents, 1 loss;
// edges: L fed blocks, b into the final norms, b^2 into the logits, b^2 into the parts, b^2 into
// the xents, b into the loss.
Counts llama_layer_counts(double b, double layers, bool fused = true) {
  const Counts block = llama_block_counts(b, fused, /*fed=*/true);
  return {b + layers * block.ops + b + 2 * b * b + b + 1, layers * block.edges + b + 3 * b * b + b};
}

void check_counts(const std::string& spec, Counts expected) {
  INFO(spec);
  const Graph g = build(spec);
  CHECK(g.size() == static_cast<int>(expected.ops));
  CHECK(g.num_edges() == static_cast<int>(expected.edges));
}

}  // namespace

TEST_CASE("every workload builds with defaults, acyclic, with roofline costs", "[workloads]") {
  REQUIRE(workload_list().size() == 8);
  for (const auto& info : workload_list()) {
    INFO(info.name);
    const Graph g = build(info.name);
    CHECK(static_cast<int>(g.topo_order().size()) == g.size());  // acyclic
    if (info.name == "stg-random") {  // STG-like task graphs: explicit integer costs 1..10, no data
      CHECK(g.size() == 100);
      for (OpId op = 0; op < g.size(); ++op) CHECK((g.cost(op) >= 1 && g.cost(op) <= 10 && g.cost(op) == std::floor(g.cost(op))));
      continue;
    }
    for (OpId op = 0; op < g.size(); ++op) {
      CHECK(g.cost(op) < 0);  // times come from the roofline, never an explicit cost
      CHECK(g.output_bytes(op) > 0);
      CHECK(g.flops(op) >= 0);
    }
  }
}

TEST_CASE("op and edge counts follow each generator's formula", "[workloads]") {
  // Defaults: chainmm b=2 kb=4, ffnn L=4 b=3, llama b=4 with one layer.
  check_counts("chainmm", chainmm_counts(2, 4));
  check_counts("ffnn", ffnn_counts(4, 3));
  check_counts("llama-block", llama_block_counts(4, true, false));
  check_counts("llama-layer", llama_layer_counts(4, 1));
  // Other shapes: odd contraction splits, one block, uneven sizes, several layers.
  check_counts("chainmm:blocks=3,kblocks=3,size=1000", chainmm_counts(3, 3));
  check_counts("chainmm:blocks=2,kblocks=6,size=1001", chainmm_counts(2, 6));
  check_counts("chainmm:blocks=1,kblocks=1,size=64", chainmm_counts(1, 1));
  check_counts("ffnn:layers=1,blocks=2,batch=64,hidden=64", ffnn_counts(1, 2));
  check_counts("ffnn:layers=5,blocks=4,batch=600,hidden=900", ffnn_counts(5, 4));
  check_counts("llama-block:fused_attention=0", llama_block_counts(4, false, false));
  check_counts("llama-block:blocks=3,seq=100,heads=6,hidden=96,ffn=50", llama_block_counts(3, true, false));
  check_counts("llama-block:blocks=1", llama_block_counts(1, true, false));
  check_counts("llama-layer:layers=2", llama_layer_counts(4, 2));
  check_counts("llama-layer:layers=3,blocks=2,fused_attention=0", llama_layer_counts(2, 3, false));
  // The formulas give the sizes of DOPPLER's graphs that the header comments promise.
  CHECK(chainmm_counts(2, 4).ops == 76);
  CHECK(ffnn_counts(4, 3).ops == 180);
  CHECK(llama_block_counts(4, true, false).ops == 192);
  CHECK(llama_layer_counts(4, 1).ops == 237);
}

TEST_CASE("op-grid has one GEMM per grid shape under the flops cap and pointwise ops per row count",
          "[workloads]") {
  // Sizes 32, 64, 128; 2 r k c <= 1e6 keeps the triples whose exponents sum to at most 18:
  // one of 15, three of 16, six of 17 ((5,5,7) and (5,6,6)), seven of 18 ((5,6,7) and (6,6,6)).
  const Graph g = build("op-grid:min_size=32,max_size=128,max_flops=1e6");
  CHECK(count_kind(g, OpKind::matmul) == 17);
  // An add and a relu for 1, 2, ..., 128 rows, and the copy each GEMM's left operand comes from.
  CHECK(count_kind(g, OpKind::elementwise) == 16 + 17);
  CHECK(g.num_edges() == 17);
  for (EdgeId e = 0; e < g.num_edges(); ++e) CHECK(g.kind(g.edge_dst(e)) == OpKind::matmul);
  for (OpId op = 0; op < g.size(); ++op) {
    INFO(g.name(op));
    REQUIRE(g.operation(op) != nullptr);
    if (g.kind(op) == OpKind::matmul) CHECK(g.flops(op) <= 1e6);
  }
  // The largest GEMM is 128 x 64 . 64 x 32 (2^19 flops) in some order of the three sizes.
  double largest = 0;
  for (OpId op = 0; op < g.size(); ++op) largest = std::max(largest, g.kind(op) == OpKind::matmul ? g.flops(op) : 0.0);
  CHECK(largest == 2.0 * 128 * 64 * 32);
  CHECK_FALSE(make_workload("op-grid:min_size=64,max_size=32").ok());
}

TEST_CASE("link-ladder sends one tensor per size from min_bytes to max_bytes in steps of four", "[workloads]") {
  const Graph g = build("link-ladder:min_bytes=4096,max_bytes=65536");
  REQUIRE(g.size() == 6);
  REQUIRE(g.num_edges() == 3);
  std::vector<double> sizes;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    sizes.push_back(g.edge_bytes(e));
    CHECK(g.in_edges(g.edge_src(e)).empty());
  }
  std::sort(sizes.begin(), sizes.end());
  CHECK(sizes == std::vector<double>{4096, 16384, 65536});
  CHECK_FALSE(make_workload("link-ladder:min_bytes=8192,max_bytes=4096").ok());
}

TEST_CASE("workload descriptions state their default op counts", "[workloads]") {
  const std::pair<const char*, double> stated[] = {{"chainmm", chainmm_counts(2, 4).ops},
                                                   {"ffnn", ffnn_counts(4, 3).ops},
                                                   {"llama-block", llama_block_counts(4, true, false).ops},
                                                   {"llama-layer", llama_layer_counts(4, 1).ops}};
  for (const auto& [name, ops] : stated) {
    INFO(name);
    const WorkloadInfo* info = find_workload(name);
    REQUIRE(info != nullptr);
    CHECK(info->description.find(std::to_string(static_cast<int>(ops)) + " ops") != std::string::npos);
  }
}

TEST_CASE("edges ship the producer's output tensor", "[workloads]") {
  for (const auto& info : workload_list()) {
    INFO(info.name);
    const Graph g = build(info.name);
    for (EdgeId e = 0; e < g.num_edges(); ++e) REQUIRE(g.edge_bytes(e) == g.output_bytes(g.edge_src(e)));
  }
}

TEST_CASE("tensor workloads name every op uniquely and give it a shape", "[workloads]") {
  for (const char* name : {"chainmm", "ffnn", "llama-block", "llama-layer", "llama-layer:layers=2", "op-grid", "link-ladder"}) {
    INFO(name);
    const Graph g = build(name);
    std::set<std::string> names;
    for (OpId op = 0; op < g.size(); ++op) {
      names.insert(g.name(op));
      CHECK_FALSE(g.shape(op).empty());
    }
    CHECK(static_cast<int>(names.size()) == g.size());
  }
}

TEST_CASE("the params_help defaults are the defaults", "[workloads]") {
  for (const auto& info : workload_list()) {
    INFO(info.name);
    std::string spec = info.name + ":";
    for (char c : info.params_help) spec += c == ' ' ? ',' : c;
    CHECK(same_graph(build(info.name), build(spec)));
  }
}

TEST_CASE("chainmm flops equal the analytic total", "[workloads]") {
  CHECK(total_flops(build("chainmm")) == Approx(chainmm_flops(8192, 4)).epsilon(1e-12));
  // Uneven splits and an odd contraction split still partition the matrices exactly.
  CHECK(total_flops(build("chainmm:blocks=3,kblocks=3,size=1000")) == Approx(chainmm_flops(1000, 3)).epsilon(1e-12));
  CHECK(total_flops(build("chainmm:blocks=2,kblocks=6,size=1001")) == Approx(chainmm_flops(1001, 6)).epsilon(1e-12));
  CHECK(total_flops(build("chainmm:blocks=1,kblocks=1,size=64")) == Approx(chainmm_flops(64, 1)).epsilon(1e-12));
  // The levels of DOPPLER's graph: 32 matmuls, 12 formations, 16 matmuls, 8 formations, 8 adds.
  const Graph g = build("chainmm");
  CHECK(count_kind(g, OpKind::matmul) == 48);
  CHECK(count_kind(g, OpKind::formation) == 20);
  CHECK(count_kind(g, OpKind::elementwise) == 8);
}

TEST_CASE("ffnn flops follow its shapes", "[workloads]") {
  const double batch = 600, hidden = 900, layers = 2;
  const Graph g = build("ffnn:layers=2,blocks=3,batch=600,hidden=900");
  CHECK(g.size() == static_cast<int>(ffnn_counts(layers, 3).ops));
  // matmuls + block sums (2 adds per element) + relu.
  const double expected = layers * (2 * batch * hidden * hidden + 2 * batch * hidden + batch * hidden);
  CHECK(total_flops(g) == Approx(expected).epsilon(1e-12));
}

TEST_CASE("llama matmul flops match LLaMA-7B dimensions", "[workloads]") {
  const Graph g = build("llama-block");
  double matmul = 0;
  for (OpId op = 0; op < g.size(); ++op)
    if (g.kind(op) == OpKind::matmul) matmul += g.flops(op);
  const double t = 2048, d = 4096, f = 11008;
  CHECK(matmul == Approx(2 * t * (4 * d * d + 3 * d * f)).epsilon(1e-12));
  CHECK(count_kind(g, OpKind::attention) == 16);
  CHECK(count_kind(build("llama-layer"), OpKind::embedding) == 4);
}

TEST_CASE("random DAGs are deterministic per seed", "[workloads]") {
  const Graph a = build("random", 7);
  CHECK(same_graph(a, build("random", 7)));
  CHECK_FALSE(same_graph(a, build("random", 8)));
  CHECK(same_graph(build("random:seed=8"), build("random", 8)));  // the spec's seed wins
  CHECK(same_graph(build("random:ops=500,edge_prob=0.2", 3), build("random:ops=500,edge_prob=0.2", 3)));
}

TEST_CASE("random DAG structure follows its parameters", "[workloads]") {
  CHECK(build("random").size() == 200);
  const Graph g = build("random:ops=1000,layers=10,fan_in=3,skip=0");
  CHECK(g.size() == 1000);
  // Every op after the first layer has a predecessor, so the sources are exactly layer 0 ("op[0,i]").
  int sources = 0, first_layer = 0;
  for (OpId op = 0; op < g.size(); ++op) {
    sources += g.preds(op).empty();
    first_layer += g.name(op).rfind("op[0,", 0) == 0;
  }
  CHECK(sources == first_layer);
  // Layer sizes are 1 + Binomial(990, 1/10): about 100 per layer (sd 9.4).
  CHECK(sources > 50);
  CHECK(sources < 150);
  // 1 + Poisson(2) distinct picks from a layer of about 100 ops: 3 on average.
  CHECK(g.num_edges() == Approx(3.0 * (1000 - sources)).epsilon(0.1));
  const Graph wide = build("random:ops=5000,layers=50,edge_prob=0.05");
  CHECK(wide.num_edges() == Approx(0.05 * 100 * 4900).epsilon(0.15));
}

TEST_CASE("random DAG edge counts in the cases the parameters fix them", "[workloads]") {
  auto sources_of = [](const Graph& g) {
    int n = 0;
    for (OpId op = 0; op < g.size(); ++op) n += g.preds(op).empty();
    return n;
  };
  for (std::uint64_t seed : {1, 2, 3}) {
    INFO("seed " << seed);
    // fan_in=1: 1 + Poisson(0) = exactly one predecessor per op outside the first layer, skips or not.
    const Graph one = build("random:ops=300,fan_in=1,skip=0.5", seed);
    CHECK(one.num_edges() == one.size() - sources_of(one));
    // One op per layer: a chain of ops - 1 edges in both modes.
    CHECK(build("random:ops=40,layers=40,skip=0", seed).num_edges() == 39);
    CHECK(build("random:ops=40,layers=40,edge_prob=0.3,skip=0", seed).num_edges() == 39);
    // One layer: no edges.
    CHECK(build("random:ops=40,layers=1", seed).num_edges() == 0);
    // edge_prob=1 without skips joins every op to every op of the previous layer: with two layers
    // of s and n - s ops, s (n - s) edges.
    const Graph full = build("random:ops=30,layers=2,edge_prob=1,skip=0", seed);
    const int s = sources_of(full);
    CHECK(full.num_edges() == s * (30 - s));
  }
}

TEST_CASE("the ccr knob scales edge bytes proportionally", "[workloads]") {
  const Graph low = build("random:ops=2000,ccr=0.5", 5);
  const Graph high = build("random:ops=2000,ccr=2", 5);
  REQUIRE(low.num_edges() == high.num_edges());
  double bytes = 0;
  for (EdgeId e = 0; e < low.num_edges(); ++e) {
    REQUIRE(high.edge_bytes(e) == Approx(4 * low.edge_bytes(e)).epsilon(1e-12));
    bytes += low.edge_bytes(e);
  }
  // Mean transfer on 10 GB/s over mean compute on 10 TFLOP/s is the ccr.
  const double transfer = bytes / low.num_edges() / 10e9;
  const double compute = total_flops(low) / low.size() / 10e12;
  CHECK(transfer / compute == Approx(0.5).epsilon(1e-9));
  const Graph none = build("random:ops=100,ccr=0");
  for (EdgeId e = 0; e < none.num_edges(); ++e) CHECK(none.edge_bytes(e) == 0);
}

TEST_CASE("random DAGs scale to 100k ops", "[workloads]") {
  const Graph g = build("random:ops=100000", 11);
  CHECK(g.size() == 100000);
  CHECK(g.num_edges() > 150000);
}

TEST_CASE("bad specs are errors that name the problem", "[workloads]") {
  std::string message = error_of("nosuch");
  CHECK(message.find("nosuch") != std::string::npos);
  CHECK(message.find("llama-layer") != std::string::npos);

  message = error_of("chainmm:foo=1");
  CHECK(message.find("foo") != std::string::npos);
  CHECK(message.find("kblocks") != std::string::npos);

  CHECK(error_of("chainmm:blocks=x").find("blocks") != std::string::npos);
  CHECK(error_of("chainmm:blocks=0").find("blocks") != std::string::npos);
  CHECK(error_of("chainmm:blocks=1.5").find("blocks") != std::string::npos);
  CHECK(error_of("chainmm:blocks=2,kblocks=3").find("kblocks") != std::string::npos);
  CHECK(error_of("chainmm:blocks").find("key=value") != std::string::npos);
  CHECK(error_of("chainmm:blocks=2,blocks=3").find("twice") != std::string::npos);
  CHECK(error_of("chainmm:blocks=4000").find("limit") != std::string::npos);
  CHECK(error_of("random:ops=-5").find("ops") != std::string::npos);
  CHECK(error_of("random:ops=1e9").find("ops") != std::string::npos);
  CHECK(error_of("random:ccr=nan").find("ccr") != std::string::npos);
  CHECK(error_of("llama-block:heads=33").find("heads") != std::string::npos);
  CHECK(error_of("llama-block:seed=3").find("seed") != std::string::npos);
  CHECK(error_of(":blocks=2").find("missing workload name") != std::string::npos);
}

TEST_CASE("specs accept spacing, case and underscores", "[workloads]") {
  CHECK(build(" LLAMA_block : blocks = 2 , ").size() == static_cast<int>(llama_block_counts(2, true, false).ops));
  auto spec = parse_workload_spec("random:ops=10,ccr=0.25");
  REQUIRE(spec.ok());
  CHECK(spec.value().name == "random");
  CHECK(spec.value().params.get("ccr", 1) == 0.25);
  CHECK(spec.value().params.get("missing", 3) == 3);
}

TEST_CASE("generators called directly use their defaults", "[workloads]") {
  auto g = make_chainmm(WorkloadParams{});
  REQUIRE(g.ok());
  CHECK(g.value().size() == static_cast<int>(chainmm_counts(2, 4).ops));
  WorkloadParams bad;
  bad.values["blocks"] = 0;
  auto error = make_ffnn(bad);
  REQUIRE_FALSE(error.ok());
  CHECK(error.error().message.find("ffnn") != std::string::npos);
}

TEST_CASE("costs=doppler prices ops by multiply-adds and transfers at 4x, on every workload", "[workloads]") {
  // CHAINMM's three n x n x n products have 3 n^3 multiply-adds (workloads/chainmm.cpp: 6 n^3 of
  // its flops are theirs); every other op costs one unit per flop (at least one).
  const std::int64_t n = 64;
  const Graph physical = build("chainmm:size=64");
  const Graph g = build("chainmm:size=64,costs=doppler");
  REQUIRE(g.size() == physical.size());
  REQUIRE(g.num_edges() == physical.num_edges());
  CHECK(g.cost_unit() == "units");
  double matmul_macs = 0;
  for (OpId op = 0; op < g.size(); ++op) {
    INFO(g.name(op));
    CHECK(g.transfer_cost(op) == 4 * g.cost(op));
    if (g.kind(op) == OpKind::matmul) matmul_macs += g.cost(op);
    else CHECK(g.cost(op) == std::max(1.0, physical.flops(op)));
  }
  CHECK(matmul_macs == 3.0 * n * n * n);
  for (const char* spec : {"ffnn:costs=doppler", "llama-block:costs=doppler", "random:ops=50,costs=doppler",
                           "llama-layer:costs=doppler,blocks=2", "stg-random:costs=doppler"}) {
    const Graph other = build(spec);
    for (OpId op = 0; op < other.size(); ++op) {
      INFO(spec << " op " << op);
      REQUIRE(other.cost(op) >= 1);
      CHECK(other.transfer_cost(op) == 4 * other.cost(op));
    }
  }
  CHECK_THAT(error_of("chainmm:costs=flops"), Catch::Contains("costs=flops") && Catch::Contains("physical") &&
                                                    Catch::Contains("doppler"));
}
