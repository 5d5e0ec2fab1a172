// Every generator's block decomposition, run for real on one device, equals the same computation
// written directly (unblocked) with ATen: the graph's operations, slices and operand slots are right.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>

#include "core/cluster.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/named_tensor.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

namespace {

at::Tensor named(const std::string& name, std::vector<std::int64_t> shape, double scale, bool integer = false) {
  std::int64_t count = 1;
  for (auto extent : shape) count *= extent;
  std::vector<float> values = named_tensor_values(name, count, scale, integer);
  return at::from_blob(values.data(), shape, at::kFloat).to(at::kDouble, false, true);
}

// The graph on one device; the outputs by op name.
std::map<std::string, at::Tensor> run_on_one_device(const Graph& graph) {
  auto cluster = Cluster::identical(1);
  REQUIRE(cluster.ok());
  Placement placement;
  placement.device.assign(static_cast<std::size_t>(graph.size()), 0);
  ExecOptions options;
  options.repeats = 1;
  options.warmup = 0;
  options.keep_outputs = true;
  auto m = execute_on_cpu(graph, placement, cluster.value(), options);
  REQUIRE(m.ok());
  std::map<std::string, at::Tensor> out;
  for (OutputTensor& o : m.value().outputs)
    out[graph.name(o.op)] = at::from_blob(o.values.data(), o.shape, at::kDouble).clone();
  return out;
}

Graph workload(const std::string& spec) {
  auto g = make_workload(spec);
  REQUIRE(g.ok());
  return std::move(g).value();
}

// `tolerance`: relative to the reference's largest magnitude (float32 by default; bfloat16 keeps 8
// significant bits, about 0.4% per rounding).
void check_close(const at::Tensor& got, const at::Tensor& want, const std::string& what, double tolerance = 1e-4) {
  INFO(what << ": shape " << got.sizes() << " vs " << want.sizes());
  REQUIRE(got.sizes() == want.sizes());
  const double error = (got - want).abs().max().item<double>();
  const double scale = std::max(1.0, want.abs().max().item<double>());
  INFO("largest difference " << error << " at scale " << scale);
  CHECK(error <= tolerance * scale);
}

at::Tensor rms(const at::Tensor& x, const at::Tensor& w) {
  return x / (x.pow(2).mean(-1, true) + 1e-5).sqrt() * w;
}

// Rotary embedding of [batch, seq, heads * hd] at positions 0..seq-1, written out per frequency.
at::Tensor rotary(const at::Tensor& x, std::int64_t heads) {
  const auto seq = x.size(1), hd = x.size(2) / heads, half = hd / 2;
  at::Tensor h = x.view({x.size(0), seq, heads, hd});
  at::Tensor out = at::empty_like(h);
  for (std::int64_t i = 0; i < half; ++i) {
    const double freq = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(hd));
    at::Tensor angle = (at::arange(seq, at::kDouble) * freq).view({1, seq, 1});
    at::Tensor a = h.select(3, i), b = h.select(3, i + half);
    out.select(3, i).copy_(a * angle.cos() - b * angle.sin());
    out.select(3, i + half).copy_(b * angle.cos() + a * angle.sin());
  }
  return out.view(x.sizes());
}

at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::int64_t heads) {
  const auto b = q.size(0), s = q.size(1), hd = q.size(2) / heads;
  auto split = [&](const at::Tensor& t) { return t.view({b, s, heads, hd}).permute({0, 2, 1, 3}); };
  at::Tensor scores = at::matmul(split(q), split(k).transpose(-1, -2)) / std::sqrt(static_cast<double>(hd));
  at::Tensor future = at::ones({s, s}, at::kBool).triu(1);
  at::Tensor p = at::softmax(scores.masked_fill(future, -std::numeric_limits<double>::infinity()), -1);
  return at::matmul(p, split(v)).permute({0, 2, 1, 3}).reshape({b, s, heads * hd});
}

struct Dims {
  std::int64_t batch, seq, hidden, heads, ffn, vocab;
};

at::Tensor llama_block(const at::Tensor& x, const Dims& d, const std::string& prefix) {
  const double s_h = 1 / std::sqrt(static_cast<double>(d.hidden)), s_f = 1 / std::sqrt(static_cast<double>(d.ffn));
  auto w = [&](const char* name, std::vector<std::int64_t> shape, double scale) {
    return named(prefix + name, std::move(shape), scale);
  };
  at::Tensor h = rms(x, w("rmsnorm.w", {d.hidden}, 1));
  at::Tensor q = rotary(at::matmul(h, w("q_proj.w", {d.hidden, d.hidden}, s_h)), d.heads);
  at::Tensor k = rotary(at::matmul(h, w("k_proj.w", {d.hidden, d.hidden}, s_h)), d.heads);
  at::Tensor v = at::matmul(h, w("v_proj.w", {d.hidden, d.hidden}, s_h));
  at::Tensor r1 = x + at::matmul(causal_attention(q, k, v, d.heads), w("o_proj.w", {d.hidden, d.hidden}, s_h));
  at::Tensor h2 = rms(r1, w("rmsnorm2.w", {d.hidden}, 1));
  at::Tensor mlp = at::silu(at::matmul(h2, w("gate_proj.w", {d.hidden, d.ffn}, s_h))) *
                   at::matmul(h2, w("up_proj.w", {d.hidden, d.ffn}, s_h));
  return r1 + at::matmul(mlp, w("down_proj.w", {d.ffn, d.hidden}, s_f));
}

// Row block r of `blocks` nearly equal blocks (the first n % blocks one larger).
std::pair<std::int64_t, std::int64_t> block(std::int64_t n, std::int64_t blocks, std::int64_t r) {
  std::int64_t start = 0;
  for (std::int64_t i = 0; i < r; ++i) start += n / blocks + (i < n % blocks);
  return {start, n / blocks + (r < n % blocks)};
}

}  // namespace

TEST_CASE("ffnn run on one device equals relu(X W) layer by layer", "[executor]") {
  const std::int64_t layers = 3, blocks = 3, batch = 10, hidden = 8;
  const Graph g = workload("ffnn:layers=3,blocks=3,batch=10,hidden=8");
  auto out = run_on_one_device(g);
  at::Tensor x = named("ffnn.x", {batch, hidden}, 1);
  for (std::int64_t l = 0; l < layers; ++l)
    x = at::relu(at::matmul(x, named("l" + std::to_string(l) + ".w", {hidden, hidden}, 1 / std::sqrt(8.0))));
  REQUIRE(out.size() == static_cast<std::size_t>(blocks * blocks));
  for (std::int64_t i = 0; i < blocks; ++i)
    for (std::int64_t j = 0; j < blocks; ++j) {
      const auto [r0, rn] = block(batch, blocks, i);
      const auto [c0, cn] = block(hidden, blocks, j);
      const std::string name = "l2.relu[" + std::to_string(i) + "," + std::to_string(j) + "]";
      REQUIRE(out.count(name));
      check_close(out[name], x.narrow(0, r0, rn).narrow(1, c0, cn), name);
    }
}

TEST_CASE("ffnn in bfloat16 runs in bfloat16 and stays within its rounding of the float64 computation", "[executor]") {
  const std::int64_t layers = 3, batch = 16, hidden = 32;
  const Graph g = workload("ffnn:layers=3,blocks=2,batch=16,hidden=32,dtype_bytes=2");
  auto out = run_on_one_device(g);
  at::Tensor x = named("ffnn.x", {batch, hidden}, 1);
  for (std::int64_t l = 0; l < layers; ++l)
    x = at::relu(at::matmul(x, named("l" + std::to_string(l) + ".w", {hidden, hidden}, 1 / std::sqrt(32.0))));
  const std::string name = "l2.relu[1,1]";
  REQUIRE(out.count(name));
  const at::Tensor want = x.narrow(0, 8, 8).narrow(1, 16, 16);
  // Three layers of bfloat16 rounding (inputs, weights, products): within a few percent, and not
  // exactly the float64 values (it did not quietly compute in a wider type).
  check_close(out[name], want, name, 5e-2);
  CHECK((out[name] - want).abs().max().item<double>() > 1e-6);
  // Every value is representable in bfloat16: converting it there and back changes nothing.
  CHECK(out[name].to(at::kBFloat16).to(at::kDouble).equal(out[name]));
}

TEST_CASE("chainmm run on one device equals C (D E) + A B", "[executor]") {
  const std::int64_t size = 13, blocks = 2, kblocks = 6;  // uneven blocks: 7 + 6, fine 3 2 2 / 2 2 2
  const Graph g = workload("chainmm:blocks=2,kblocks=6,size=13");
  auto out = run_on_one_device(g);
  auto m = [&](const char* name) { return named(std::string("chainmm.") + name, {size, size}, 1); };
  at::Tensor y = at::matmul(m("C"), at::matmul(m("D"), m("E"))) + at::matmul(m("A"), m("B"));
  REQUIRE(out.size() == static_cast<std::size_t>(kblocks * blocks));
  for (std::int64_t i = 0; i < blocks; ++i) {
    const auto [coarse0, coarse_n] = block(size, blocks, i);
    for (std::int64_t f = 0; f < kblocks / blocks; ++f) {
      const auto [fine0, fine_n] = block(coarse_n, kblocks / blocks, f);
      const std::int64_t r = i * (kblocks / blocks) + f;
      for (std::int64_t j = 0; j < blocks; ++j) {
        const auto [c0, cn] = block(size, blocks, j);
        const std::string name = "y_add[" + std::to_string(r) + "," + std::to_string(j) + "]";
        REQUIRE(out.count(name));
        check_close(out[name], y.narrow(0, coarse0 + fine0, fine_n).narrow(1, c0, cn), name);
      }
    }
  }
}

TEST_CASE("op-grid's ops compute the products, sums and relus of the inputs' corners", "[executor]") {
  const std::int64_t side = 32;
  const Graph g = workload("op-grid:min_size=8,max_size=32,max_flops=20000");
  auto out = run_on_one_device(g);
  const at::Tensor a = named("grid.a", {side, side}, 1), b = named("grid.b", {side, side}, 1);
  int gemms = 0;
  for (std::int64_t r : {8, 16, 32})
    for (std::int64_t k : {8, 16, 32})
      for (std::int64_t c : {8, 16, 32}) {
        const std::string name = "mm[" + std::to_string(r) + "," + std::to_string(k) + "," + std::to_string(c) + "]";
        if (2 * r * k * c > 20000) {
          CHECK_FALSE(out.count(name));
          continue;
        }
        REQUIRE(out.count(name));
        check_close(out[name], at::matmul(a.narrow(0, 0, r).narrow(1, 0, k), b.narrow(0, 0, k).narrow(1, 0, c)), name);
        ++gemms;
      }
  CHECK(gemms == 23);  // of the 27 triples, 16 x 32 x 32 (three orders) and 32^3 exceed 10000 = max_flops / 2
  for (std::int64_t rows = 1; rows <= side; rows *= 2) {
    const std::string shape = std::to_string(rows) + "," + std::to_string(side) + "]";
    REQUIRE(out.count("add[" + shape));
    check_close(out["add[" + shape], a.narrow(0, 0, rows) + b.narrow(0, 0, rows), "add[" + shape);
    check_close(out["relu[" + shape], a.narrow(0, 0, rows).clamp_min(0), "relu[" + shape);
  }
}

TEST_CASE("llama-block run on one device equals the unblocked transformer block", "[executor]") {
  const Dims d{2, 10, 40, 5, 22, 0};  // 3 blocks: rows 4 3 3, head groups 2 2 1, MLP slices 8 7 7
  const at::Tensor x = named("x", {d.batch, d.seq, d.hidden}, 1);
  const at::Tensor want = llama_block(x, d, "");
  for (const char* fused : {"1", "0"}) {
    const Graph g = workload(std::string("llama-block:blocks=3,batch=2,seq=10,hidden=40,heads=5,ffn=22,dtype_bytes=4,"
                                         "fused_attention=") + fused);
    auto out = run_on_one_device(g);
    REQUIRE(out.size() == 3);
    for (std::int64_t r = 0; r < 3; ++r) {
      const auto [r0, rn] = block(d.seq, 3, r);
      const std::string name = "resid2[" + std::to_string(r) + "]";
      REQUIRE(out.count(name));
      check_close(out[name], want.narrow(1, r0, rn), name + " fused_attention=" + fused);
    }
  }
}

TEST_CASE("llama-layer run on one device gives the unblocked model's mean cross-entropy", "[executor]") {
  const Dims d{1, 9, 24, 3, 20, 50};
  const Graph g = workload("llama-layer:blocks=3,batch=1,seq=9,hidden=24,heads=3,ffn=20,vocab=50,layers=2,dtype_bytes=4");
  auto out = run_on_one_device(g);
  REQUIRE(out.count("loss"));
  const at::Tensor tokens = named("tokens", {d.batch, d.seq}, 50, true).to(at::kLong);
  const at::Tensor targets = named("targets", {d.batch, d.seq}, 50, true).to(at::kLong);
  at::Tensor h = at::embedding(named("embed.w", {d.vocab, d.hidden}, 1), tokens);
  for (int l = 0; l < 2; ++l) h = llama_block(h, d, "L" + std::to_string(l) + ".");
  at::Tensor logits = at::matmul(rms(h, named("final_norm.w", {d.hidden}, 1)),
                                 named("lm_head.w", {d.hidden, d.vocab}, 1 / std::sqrt(24.0)));
  at::Tensor loss = -at::log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).mean().reshape({1});
  check_close(out["loss"], loss, "loss");
}
