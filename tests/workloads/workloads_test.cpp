#include <catch2/catch.hpp>

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

}  // namespace

TEST_CASE("every workload builds with defaults in its stated size range", "[workloads]") {
  struct Range { const char* name; int min, max; };
  const Range ranges[] = {{"chainmm", 40, 120},      {"ffnn", 150, 220},     {"llama-block", 180, 220},
                          {"llama-layer", 230, 370}, {"random", 200, 200},   {"stg-random", 100, 100}};
  REQUIRE(workload_list().size() == std::size(ranges));
  for (const Range& range : ranges) {
    INFO(range.name);
    REQUIRE(find_workload(range.name) != nullptr);
    const Graph g = build(range.name);
    CHECK(g.size() >= range.min);
    CHECK(g.size() <= range.max);
    CHECK(static_cast<int>(g.topo_order().size()) == g.size());  // acyclic
    CHECK(g.num_edges() > 0);
    if (std::string(range.name) == "stg-random") {  // STG-like: explicit integer costs, no data
      for (OpId op = 0; op < g.size(); ++op) CHECK((g.cost(op) >= 1 && g.cost(op) <= 10));
      continue;
    }
    CHECK(total_flops(g) > 0);
    for (OpId op = 0; op < g.size(); ++op) {
      CHECK(g.cost(op) < 0);  // times come from the roofline, never an explicit cost
      CHECK(g.output_bytes(op) > 0);
    }
  }
}

TEST_CASE("default op counts match the DOPPLER-like structure", "[workloads]") {
  CHECK(build("chainmm").size() == 76);
  CHECK(build("ffnn").size() == 180);
  CHECK(build("llama-block").size() == 192);
  CHECK(build("llama-layer").size() == 237);
  CHECK(build("llama-block:fused_attention=0").size() == 4 * 4 + 13 * 16);
  CHECK(build("llama-layer:layers=2").size() == 237 + 192);
}

TEST_CASE("edges ship the producer's output tensor", "[workloads]") {
  for (const auto& info : workload_list()) {
    INFO(info.name);
    const Graph g = build(info.name);
    for (EdgeId e = 0; e < g.num_edges(); ++e) REQUIRE(g.edge_bytes(e) == g.output_bytes(g.edge_src(e)));
  }
}

TEST_CASE("tensor workloads name every op uniquely and give it a shape", "[workloads]") {
  for (const char* name : {"chainmm", "ffnn", "llama-block", "llama-layer", "llama-layer:layers=2"}) {
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
  CHECK(g.size() == 2 * (27 + 18));
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
  const Graph g = build("random:ops=1000,layers=10,fan_in=3,skip=0");
  CHECK(g.size() == 1000);
  int sources = 0;
  for (OpId op = 0; op < g.size(); ++op) sources += g.preds(op).empty();
  CHECK(sources < 200);  // only the first layer
  CHECK(g.num_edges() == Approx(3.0 * (1000 - sources)).epsilon(0.1));
  const Graph wide = build("random:ops=5000,layers=50,edge_prob=0.05");
  CHECK(wide.num_edges() == Approx(0.05 * 100 * 4900).epsilon(0.15));
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
  CHECK(build(" LLAMA_block : blocks = 2 , ").size() == 4 * 2 + 11 * 4);
  auto spec = parse_workload_spec("random:ops=10,ccr=0.25");
  REQUIRE(spec.ok());
  CHECK(spec.value().name == "random");
  CHECK(spec.value().params.get("ccr", 1) == 0.25);
  CHECK(spec.value().params.get("missing", 3) == 3);
}

TEST_CASE("generators called directly use their defaults", "[workloads]") {
  auto g = make_chainmm(WorkloadParams{});
  REQUIRE(g.ok());
  CHECK(g.value().size() == 76);
  WorkloadParams bad;
  bad.values["blocks"] = 0;
  auto error = make_ffnn(bad);
  REQUIRE_FALSE(error.ok());
  CHECK(error.error().message.find("ffnn") != std::string::npos);
}
