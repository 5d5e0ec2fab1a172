// LLAMA-BLOCK (DOPPLER section 5): one LLaMA-7B-like transformer block (hidden 4096, MLP 11008,
// 32 heads, sequence 2048, batch 1), forward pass. The sequence is cut into `blocks` row blocks
// (r) and every weight into `blocks` column blocks (c: head groups for attention, slices of the MLP
// width), so each matmul becomes per-block ops:
//   rmsnorm[r] -> q/k/v_proj[r,c] -> rope_q/k[r,c] -> attention[r,c] (causal: keys and values of
//   row blocks <= r) -> o_proj[r,c] (partial sums) -> resid1[r] (x + sum_c) -> rmsnorm2[r] ->
//   gate/up[r,c] -> silu_mul[r,c] -> down[r,c] (partial sums) -> resid2[r]
// 4 b + 11 b^2 ops (192 for b = 4); with fused_attention=0 attention is scores, softmax and pv
// (4 b + 13 b^2). Edges, the input being a graph input: b^3 + 15 b^2 + 2 b (312 for b = 4), of
// which the attention of row block r reads q and r + 1 key and value blocks; b^3 + 17 b^2 + 2 b
// with split attention.
// Real execution (core/operation.hpp): the block's input is the graph input "<prefix>x" [batch,
// seq, hidden] unless ops produce it; weights are parameters "<prefix><what>.w" (q_proj.w is
// hidden x hidden, read in column blocks; o_proj.w and down_proj.w in row blocks); rope and the
// causal mask take each row block's position in the sequence.
#include "workloads/generators.hpp"

namespace gantry {

namespace {

using namespace workload_detail;

struct Field {
  const char* key;
  std::int64_t fallback;
  std::int64_t max;
  std::int64_t LlamaDims::*member;
};

// Flops per element of the pointwise ops (rough counts; the roofline makes them memory-bound).
constexpr double kNormFlops = 4;  // square, sum, scale by rsqrt, multiply by the weight
constexpr double kRopeFlops = 3;  // x cos + rotate(x) sin
constexpr double kSiluMulFlops = 5;
constexpr double kSoftmaxFlops = 5;
constexpr double kNormEps = 1e-5;
constexpr double kRopeTheta = 10000;

std::int64_t total(const std::vector<std::int64_t>& sizes) {
  std::int64_t sum = 0;
  for (std::int64_t size : sizes) sum += size;
  return sum;
}

// Builds one block; members hold the shapes every stage shares.
class BlockBuilder {
 public:
  BlockBuilder(GraphBuilder& graph, const LlamaDims& d, std::string prefix)
      : graph_(graph), d_(d), prefix_(std::move(prefix)), rows_(split_sizes(d.seq, d.blocks)),
        groups_(split_sizes(d.heads, d.blocks)), mlp_(split_sizes(d.ffn, d.blocks)) {}

  std::vector<OpId> build(const std::vector<OpId>& x) {
    const auto norm1 = rmsnorms("rmsnorm", x);
    const auto q = projections("q_proj", norm1, group_widths());
    const auto k = projections("k_proj", norm1, group_widths());
    const auto v = projections("v_proj", norm1, group_widths());
    const auto q_rot = ropes("rope_q", q);
    const auto k_rot = ropes("rope_k", k);
    const auto attn = d_.fused_attention ? fused_attention(q_rot, k_rot, v) : split_attention(q_rot, k_rot, v);
    const auto o = down_projections("o_proj", attn, group_widths());
    const auto resid1 = residuals("resid1", x, o);
    const auto norm2 = rmsnorms("rmsnorm2", resid1);
    const auto gate = projections("gate_proj", norm2, mlp_);
    const auto up = projections("up_proj", norm2, mlp_);
    const auto h = silu_muls(gate, up);
    const auto down = down_projections("down_proj", h, mlp_);
    return residuals("resid2", resid1, down);
  }

 private:
  std::int64_t b() const { return d_.blocks; }
  std::size_t at(std::int64_t r, std::int64_t c) const { return static_cast<std::size_t>(r * b() + c); }
  double tokens(std::int64_t r) const { return static_cast<double>(d_.batch * rows_[r]); }
  double dt() const { return d_.dtype_bytes; }
  std::vector<std::int64_t> group_widths() const {
    std::vector<std::int64_t> widths;
    for (std::int64_t heads : groups_) widths.push_back(heads * d_.head_dim());
    return widths;
  }
  // Keys before the end of row block r (causal attention sees all earlier blocks).
  double keys_through(std::int64_t r) const {
    std::int64_t total = 0;
    for (std::int64_t i = 0; i <= r; ++i) total += rows_[i];
    return static_cast<double>(total);
  }
  std::vector<std::int64_t> row_shape(std::int64_t r, std::int64_t width) const {
    return {d_.batch, rows_[r], width};
  }
  // Row block r of the block's graph input (when no op produces it).
  Operand block_input(std::int64_t r) const {
    return Operand::input(prefix_ + "x", {d_.batch, d_.seq, d_.hidden}, {block_of(1, rows_, r)});
  }
  double position(std::int64_t r) const { return static_cast<double>(block_of(1, rows_, r).begin); }
  // An op whose operands are `count` edges, in link order.
  OpId add_edge_op(OpSpec spec, TensorFn fn, int count) {
    spec.operation = operation(fn, dt(), edge_operands(count));
    return graph_.add_op(std::move(spec));
  }

  std::vector<OpId> rmsnorms(const char* what, const std::vector<OpId>& x) {
    std::vector<OpId> ids;
    const double width = static_cast<double>(d_.hidden);
    for (std::int64_t r = 0; r < b(); ++r) {
      const double elements = tokens(r) * width;
      OpSpec spec = make_op(label(prefix_, what, {r}), OpKind::norm, kNormFlops * elements,
                            (2 * elements + width) * dt(), elements * dt(), row_shape(r, d_.hidden));
      spec.operation = operation(TensorFn::rmsnorm, dt(),
                                 {x.empty() ? block_input(r) : Operand::edge(),
                                  Operand::parameter(prefix_ + what + ".w", {d_.hidden}, 1)})
                           .with("eps", kNormEps);
      OpId id = graph_.add_op(std::move(spec));
      if (!x.empty()) link(graph_, x[static_cast<std::size_t>(r)], id, 0);
      ids.push_back(id);
    }
    return ids;
  }

  // Y[r,c] = X[r] . W[:, c]: column-split projections, no partial sums.
  std::vector<OpId> projections(const char* what, const std::vector<OpId>& x,
                                const std::vector<std::int64_t>& widths) {
    std::vector<OpId> ids;
    for (std::int64_t r = 0; r < b(); ++r)
      for (std::int64_t c = 0; c < b(); ++c) {
        OpSpec spec = matmul_op(label(prefix_, what, {r, c}), tokens(r), static_cast<double>(d_.hidden),
                                static_cast<double>(widths[c]), dt(), row_shape(r, widths[c]));
        spec.operation = operation(TensorFn::matmul, dt(),
                                   {Operand::edge(), Operand::parameter(prefix_ + what + ".w", {d_.hidden, total(widths)},
                                                                        weight_scale(d_.hidden), {block_of(1, widths, c)})});
        OpId id = graph_.add_op(std::move(spec));
        link(graph_, x[static_cast<std::size_t>(r)], id, 0);
        ids.push_back(id);
      }
    return ids;
  }

  // P[r,c] = X[r,c] . W[c, :]: row-split projections back to the hidden width, summed later.
  std::vector<OpId> down_projections(const char* what, const std::vector<OpId>& x,
                                     const std::vector<std::int64_t>& widths) {
    std::vector<OpId> ids;
    for (std::int64_t r = 0; r < b(); ++r)
      for (std::int64_t c = 0; c < b(); ++c) {
        OpSpec spec = matmul_op(label(prefix_, what, {r, c}), tokens(r), static_cast<double>(widths[c]),
                                static_cast<double>(d_.hidden), dt(), row_shape(r, d_.hidden));
        spec.operation = operation(TensorFn::matmul, dt(),
                                   {Operand::edge(), Operand::parameter(prefix_ + what + ".w", {total(widths), d_.hidden},
                                                                        weight_scale(total(widths)), {block_of(0, widths, c)})});
        OpId id = graph_.add_op(std::move(spec));
        link(graph_, x[at(r, c)], id, 0);
        ids.push_back(id);
      }
    return ids;
  }

  std::vector<OpId> ropes(const char* what, const std::vector<OpId>& x) {
    std::vector<OpId> ids;
    const auto widths = group_widths();
    for (std::int64_t r = 0; r < b(); ++r)
      for (std::int64_t c = 0; c < b(); ++c) {
        const double elements = tokens(r) * static_cast<double>(widths[c]);
        OpSpec spec = make_op(label(prefix_, what, {r, c}), OpKind::elementwise, kRopeFlops * elements,
                              2 * elements * dt(), elements * dt(), row_shape(r, widths[c]));
        spec.operation = operation(TensorFn::rope, dt(), edge_operands(1))
                             .with("heads", static_cast<double>(groups_[c]))
                             .with("position", position(r))
                             .with("theta", kRopeTheta);
        OpId id = graph_.add_op(std::move(spec));
        link(graph_, x[at(r, c)], id, 0);
        ids.push_back(id);
      }
    return ids;
  }

  // Flash-style attention of query block r over key/value blocks 0..r of head group c.
  std::vector<OpId> fused_attention(const std::vector<OpId>& q, const std::vector<OpId>& k,
                                    const std::vector<OpId>& v) {
    std::vector<OpId> ids;
    const auto widths = group_widths();
    for (std::int64_t r = 0; r < b(); ++r)
      for (std::int64_t c = 0; c < b(); ++c) {
        const double heads = static_cast<double>(groups_[c]), hd = static_cast<double>(d_.head_dim());
        const double sq = static_cast<double>(rows_[r]), sk = keys_through(r);
        const double batch = static_cast<double>(d_.batch), width = static_cast<double>(widths[c]);
        const double scores = batch * heads * sq * sk;
        const double flops = scores * (4 * hd + kSoftmaxFlops);
        const double bytes = (2 * tokens(r) * width + 2 * batch * sk * width) * dt();
        OpSpec spec = make_op(label(prefix_, "attention", {r, c}), OpKind::attention, flops, bytes,
                              tokens(r) * width * dt(), row_shape(r, widths[c]));
        spec.operation = operation(TensorFn::attention, dt(), edge_operands(static_cast<int>(1 + 2 * (r + 1))))
                             .with("heads", heads)
                             .with("position", position(r));
        OpId id = graph_.add_op(std::move(spec));
        link(graph_, q[at(r, c)], id, 0);
        for (std::int64_t key = 0; key <= r; ++key) {
          link(graph_, k[at(key, c)], id, static_cast<int>(1 + 2 * key));
          link(graph_, v[at(key, c)], id, static_cast<int>(2 + 2 * key));
        }
        ids.push_back(id);
      }
    return ids;
  }

  // The same attention as three ops: scores = q k^T, softmax, pv = p v.
  std::vector<OpId> split_attention(const std::vector<OpId>& q, const std::vector<OpId>& k,
                                    const std::vector<OpId>& v) {
    std::vector<OpId> ids;
    const auto widths = group_widths();
    for (std::int64_t r = 0; r < b(); ++r)
      for (std::int64_t c = 0; c < b(); ++c) {
        const double heads = static_cast<double>(groups_[c]), hd = static_cast<double>(d_.head_dim());
        const double sq = static_cast<double>(rows_[r]), sk = keys_through(r);
        const double batch = static_cast<double>(d_.batch), width = static_cast<double>(widths[c]);
        const double scores = batch * heads * sq * sk;
        const std::vector<std::int64_t> score_shape = {d_.batch, groups_[c], rows_[r],
                                                        static_cast<std::int64_t>(sk)};
        OpSpec qk_spec = make_op(label(prefix_, "attn_scores", {r, c}), OpKind::matmul, 2 * scores * hd,
                                 (tokens(r) * width + batch * sk * width + scores) * dt(), scores * dt(), score_shape);
        qk_spec.operation = operation(TensorFn::scores, dt(), edge_operands(static_cast<int>(r + 2)))
                                .with("heads", heads)
                                .with("position", position(r));
        OpId qk = graph_.add_op(std::move(qk_spec));
        link(graph_, q[at(r, c)], qk, 0);
        for (std::int64_t key = 0; key <= r; ++key) link(graph_, k[at(key, c)], qk, static_cast<int>(key + 1));
        OpId soft = add_edge_op(make_op(label(prefix_, "attn_softmax", {r, c}), OpKind::softmax, kSoftmaxFlops * scores,
                                        2 * scores * dt(), scores * dt(), score_shape),
                                TensorFn::softmax, 1);
        link(graph_, qk, soft, 0);
        OpSpec pv_spec = make_op(label(prefix_, "attn_pv", {r, c}), OpKind::matmul, 2 * scores * hd,
                                 (scores + batch * sk * width + tokens(r) * width) * dt(), tokens(r) * width * dt(),
                                 row_shape(r, widths[c]));
        pv_spec.operation = operation(TensorFn::pv, dt(), edge_operands(static_cast<int>(r + 2))).with("heads", heads);
        OpId pv = graph_.add_op(std::move(pv_spec));
        link(graph_, soft, pv, 0);
        for (std::int64_t key = 0; key <= r; ++key) link(graph_, v[at(key, c)], pv, static_cast<int>(key + 1));
        ids.push_back(pv);
      }
    return ids;
  }

  // out[r] = base[r] + sum_c partials[r,c]; `base` empty means the block's graph input.
  std::vector<OpId> residuals(const char* what, const std::vector<OpId>& base, const std::vector<OpId>& partials) {
    std::vector<OpId> ids;
    for (std::int64_t r = 0; r < b(); ++r) {
      const double elements = tokens(r) * static_cast<double>(d_.hidden);
      OpSpec spec = sum_op(label(prefix_, what, {r}), OpKind::elementwise, elements, static_cast<int>(b() + 1), dt(),
                           row_shape(r, d_.hidden));
      std::vector<Operand> operands = edge_operands(static_cast<int>(b() + 1));
      if (base.empty()) operands[0] = block_input(r);
      spec.operation = operation(TensorFn::add, dt(), std::move(operands));
      OpId id = graph_.add_op(std::move(spec));
      if (!base.empty()) link(graph_, base[static_cast<std::size_t>(r)], id, 0);
      for (std::int64_t c = 0; c < b(); ++c) link(graph_, partials[at(r, c)], id, static_cast<int>(c + 1));
      ids.push_back(id);
    }
    return ids;
  }

  std::vector<OpId> silu_muls(const std::vector<OpId>& gate, const std::vector<OpId>& up) {
    std::vector<OpId> ids;
    for (std::int64_t r = 0; r < b(); ++r)
      for (std::int64_t c = 0; c < b(); ++c) {
        const double elements = tokens(r) * static_cast<double>(mlp_[c]);
        OpId id = add_edge_op(make_op(label(prefix_, "silu_mul", {r, c}), OpKind::elementwise, kSiluMulFlops * elements,
                                      3 * elements * dt(), elements * dt(), row_shape(r, mlp_[c])),
                              TensorFn::silu_mul, 2);
        link(graph_, gate[at(r, c)], id, 0);
        link(graph_, up[at(r, c)], id, 1);
        ids.push_back(id);
      }
    return ids;
  }

  GraphBuilder& graph_;
  const LlamaDims& d_;
  std::string prefix_;
  std::vector<std::int64_t> rows_, groups_, mlp_;
};

}  // namespace

Result<LlamaDims> read_llama_dims(const WorkloadParams& p) {
  LlamaDims d;
  constexpr std::int64_t kBig = std::int64_t{1} << 40;
  const Field fields[] = {
      {"blocks", 4, 256, &LlamaDims::blocks},   {"seq", 2048, kBig, &LlamaDims::seq},
      {"batch", 1, kBig, &LlamaDims::batch},    {"hidden", 4096, kBig, &LlamaDims::hidden},
      {"ffn", 11008, kBig, &LlamaDims::ffn},    {"heads", 32, kBig, &LlamaDims::heads},
  };
  for (const Field& field : fields) {
    auto value = p.get_int(field.key, field.fallback, 1, field.max);
    if (!value) return value.error();
    d.*field.member = value.value();
  }
  auto fused = p.get_int("fused_attention", 1, 0, 1);
  if (!fused) return fused.error();
  d.fused_attention = fused.value() == 1;
  auto dtype = p.get_real("dtype_bytes", 2, 0.125, 64);
  if (!dtype) return dtype.error();
  d.dtype_bytes = dtype.value();

  if (d.hidden % d.heads != 0)
    return make_error(p.workload + ": hidden (" + std::to_string(d.hidden) + ") must be a multiple of heads (" +
                      std::to_string(d.heads) + ")");
  // Every sequence block, head group and MLP slice must be non-empty.
  for (const auto& [key, value] : {std::pair{"seq", d.seq}, std::pair{"heads", d.heads}, std::pair{"ffn", d.ffn}})
    if (value < d.blocks)
      return make_error(p.workload + ": " + key + " (" + std::to_string(value) + ") must be at least blocks (" +
                        std::to_string(d.blocks) + ")");
  return d;
}

std::vector<OpId> append_llama_block(GraphBuilder& graph, const LlamaDims& dims,
                                     const std::vector<OpId>& input_rows, const std::string& prefix) {
  return BlockBuilder(graph, dims, prefix).build(input_rows);
}

WorkloadInfo llama_block_info() {
  return {"llama-block",
          "one LLaMA-7B-like transformer block (rmsnorm, q/k/v, rope, causal attention per head group, "
          "output projection, residual, SiLU MLP, residual), every matmul split into blocks x blocks ops "
          "(192 ops by default)",
          "blocks=4 seq=2048 batch=1 hidden=4096 ffn=11008 heads=32 fused_attention=1 dtype_bytes=2"};
}

Result<Graph> make_llama_block(const WorkloadParams& given) {
  const WorkloadParams params = named(given, "llama-block");
  auto dims = read_llama_dims(params);
  if (!dims) return dims.error();
  const double b = static_cast<double>(dims.value().blocks);
  auto budget = check_budget(params, dims.value().block_ops(), b * b * b + 20 * b * b);
  if (!budget) return budget.error();
  GraphBuilder graph("llama-block");
  append_llama_block(graph, dims.value(), {}, "");
  return graph.build();
}

}  // namespace gantry
