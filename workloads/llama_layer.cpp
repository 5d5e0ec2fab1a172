// LLAMA-LAYER (DOPPLER section 5): a full LLaMA-7B-like model slice, forward pass with the loss:
//   embed[r] -> `layers` transformer blocks (llama_block.cpp) -> final_norm[r] ->
//   logits[r,v] (vocab 32000 in `blocks` slices) -> xent_part[r,v] (max, sum of exponentials and
//   target logit per vocab slice) -> xent[r] (per-token cross-entropy) -> loss (mean)
// Ops: b embeds + layers x block_ops (4 b + 11 b^2, or 4 b + 13 b^2 with fused_attention=0) + b final
// norms + b^2 logits + b^2 xent parts + b xents + 1 loss = 3 b + 1 + 2 b^2 + layers x block_ops
// (237 for b = 4 and one layer). Edges: layers x (block edges + 2 b, the block reading its input
// rows in rmsnorm and resid1) + 3 b^2 + 2 b (376 for b = 4 and one layer).
// Real execution (core/operation.hpp): the integer graph inputs "tokens" and "targets" [batch,
// seq], the parameters "embed.w" [vocab, hidden], "final_norm.w" and "lm_head.w" [hidden, vocab]
// (read in column slices), and the blocks' own (llama_block.cpp, prefixed "L<l>." with layers > 1).
#include "workloads/generators.hpp"

namespace gantry {

namespace {

using namespace workload_detail;

constexpr double kSoftmaxFlops = 5;  // per logit: max, subtract, exp, sum, target pick

struct LayerShape {
  LlamaDims dims;
  std::int64_t layers = 1;
  std::int64_t vocab = 32000;
};

Result<LayerShape> read_shape(const WorkloadParams& p) {
  LayerShape s;
  auto dims = read_llama_dims(p);
  if (!dims) return dims.error();
  s.dims = dims.value();
  auto layers = p.get_int("layers", 1, 1, 10000);
  if (!layers) return layers.error();
  s.layers = layers.value();
  auto vocab = p.get_int("vocab", 32000, 1, std::int64_t{1} << 40);
  if (!vocab) return vocab.error();
  s.vocab = vocab.value();
  if (s.vocab < s.dims.blocks)
    return make_error(p.workload + ": vocab (" + std::to_string(s.vocab) + ") must be at least blocks (" +
                      std::to_string(s.dims.blocks) + ")");
  return s;
}

class LayerBuilder {
 public:
  explicit LayerBuilder(const LayerShape& s)
      : s_(s), d_(s.dims), graph_("llama-layer"), rows_(split_sizes(d_.seq, d_.blocks)),
        vocab_(split_sizes(s.vocab, d_.blocks)) {}

  Result<Graph> build() {
    std::vector<OpId> x = embeddings();
    for (std::int64_t l = 0; l < s_.layers; ++l)
      x = append_llama_block(graph_, d_, x, s_.layers > 1 ? "L" + std::to_string(l) + "." : "");
    const auto norm = final_norms(x);
    const auto logits = vocab_projections(norm);
    const auto parts = xent_parts(logits);
    mean_loss(token_losses(parts));
    return graph_.build();
  }

 private:
  std::int64_t b() const { return d_.blocks; }
  std::size_t at(std::int64_t r, std::int64_t v) const { return static_cast<std::size_t>(r * b() + v); }
  double tokens(std::int64_t r) const { return static_cast<double>(d_.batch * rows_[r]); }
  double dt() const { return d_.dtype_bytes; }
  double hidden() const { return static_cast<double>(d_.hidden); }
  // Row block r of an integer graph input of token ids (the inputs, or the targets of the loss).
  Operand token_rows(const char* name, std::int64_t r) const {
    return Operand::token_ids(name, {d_.batch, d_.seq}, s_.vocab, {block_of(1, rows_, r)});
  }

  // Gathers table rows for the token ids: pure memory traffic.
  std::vector<OpId> embeddings() {
    std::vector<OpId> ids;
    for (std::int64_t r = 0; r < b(); ++r) {
      const double elements = tokens(r) * hidden();
      OpSpec spec = make_op(label("", "embed", {r}), OpKind::embedding, 0, 2 * elements * dt() + tokens(r) * 4,
                            elements * dt(), {d_.batch, rows_[r], d_.hidden});
      spec.operation = operation(TensorFn::embedding, dt(),
                                 {token_rows("tokens", r), Operand::parameter("embed.w", {s_.vocab, d_.hidden}, 1)});
      ids.push_back(graph_.add_op(std::move(spec)));
    }
    return ids;
  }

  std::vector<OpId> final_norms(const std::vector<OpId>& x) {
    std::vector<OpId> ids;
    for (std::int64_t r = 0; r < b(); ++r) {
      const double elements = tokens(r) * hidden();
      OpSpec spec = make_op(label("", "final_norm", {r}), OpKind::norm, 4 * elements, (2 * elements + hidden()) * dt(),
                            elements * dt(), {d_.batch, rows_[r], d_.hidden});
      spec.operation = operation(TensorFn::rmsnorm, dt(),
                                 {Operand::edge(), Operand::parameter("final_norm.w", {d_.hidden}, 1)})
                           .with("eps", 1e-5);
      OpId id = graph_.add_op(std::move(spec));
      link(graph_, x[static_cast<std::size_t>(r)], id, 0);
      ids.push_back(id);
    }
    return ids;
  }

  std::vector<OpId> vocab_projections(const std::vector<OpId>& norm) {
    std::vector<OpId> ids;
    for (std::int64_t r = 0; r < b(); ++r)
      for (std::int64_t v = 0; v < b(); ++v) {
        OpSpec spec = matmul_op(label("", "logits", {r, v}), tokens(r), hidden(), static_cast<double>(vocab_[v]), dt(),
                                {d_.batch, rows_[r], vocab_[v]});
        spec.operation = operation(TensorFn::matmul, dt(),
                                   {Operand::edge(), Operand::parameter("lm_head.w", {d_.hidden, s_.vocab},
                                                                        weight_scale(d_.hidden), {block_of(1, vocab_, v)})});
        OpId id = graph_.add_op(std::move(spec));
        link(graph_, norm[static_cast<std::size_t>(r)], id, 0);
        ids.push_back(id);
      }
    return ids;
  }

  // Per vocab slice: running max, sum of exponentials and the target's logit (3 values per token),
  // so the slices combine into an exact log-softmax without shipping the logits.
  std::vector<OpId> xent_parts(const std::vector<OpId>& logits) {
    std::vector<OpId> ids;
    for (std::int64_t r = 0; r < b(); ++r)
      for (std::int64_t v = 0; v < b(); ++v) {
        const double elements = tokens(r) * static_cast<double>(vocab_[v]);
        OpSpec spec = make_op(label("", "xent_part", {r, v}), OpKind::softmax, kSoftmaxFlops * elements,
                              (elements + 3 * tokens(r)) * dt() + tokens(r) * 4, 3 * tokens(r) * dt(),
                              {d_.batch, rows_[r], 3});
        spec.operation = operation(TensorFn::xent_part, dt(), {Operand::edge(), token_rows("targets", r)})
                             .with("offset", static_cast<double>(block_of(0, vocab_, v).begin));
        OpId id = graph_.add_op(std::move(spec));
        link(graph_, logits[at(r, v)], id, 0);
        ids.push_back(id);
      }
    return ids;
  }

  std::vector<OpId> token_losses(const std::vector<OpId>& parts) {
    std::vector<OpId> ids;
    const double slices = static_cast<double>(b());
    for (std::int64_t r = 0; r < b(); ++r) {
      OpSpec spec = make_op(label("", "xent", {r}), OpKind::reduce, 3 * slices * tokens(r),
                            (3 * slices + 1) * tokens(r) * dt(), tokens(r) * dt(), {d_.batch, rows_[r]});
      spec.operation = operation(TensorFn::xent, dt(), edge_operands(static_cast<int>(b())));
      OpId id = graph_.add_op(std::move(spec));
      for (std::int64_t v = 0; v < b(); ++v) link(graph_, parts[at(r, v)], id, static_cast<int>(v));
      ids.push_back(id);
    }
    return ids;
  }

  void mean_loss(const std::vector<OpId>& losses) {
    const double all = static_cast<double>(d_.batch * d_.seq);
    OpSpec spec = make_op("loss", OpKind::reduce, all, (all + 1) * dt(), dt(), {1});
    spec.operation = operation(TensorFn::mean, dt(), edge_operands(static_cast<int>(losses.size())));
    OpId id = graph_.add_op(std::move(spec));
    for (std::size_t r = 0; r < losses.size(); ++r) link(graph_, losses[r], id, static_cast<int>(r));
  }

  LayerShape s_;
  LlamaDims d_;
  GraphBuilder graph_;
  std::vector<std::int64_t> rows_, vocab_;
};

}  // namespace

WorkloadInfo llama_layer_info() {
  return {"llama-layer",
          "a full LLaMA-7B-like layer: token embedding, `layers` transformer blocks (see llama-block), "
          "final rmsnorm, vocabulary projection in blocks slices and the cross-entropy loss (237 ops by "
          "default)",
          "blocks=4 seq=2048 batch=1 hidden=4096 ffn=11008 heads=32 fused_attention=1 dtype_bytes=2 "
          "layers=1 vocab=32000"};
}

Result<Graph> make_llama_layer(const WorkloadParams& given) {
  const WorkloadParams params = named(given, "llama-layer");
  auto shape = read_shape(params);
  if (!shape) return shape.error();
  const LayerShape& s = shape.value();
  const double b = static_cast<double>(s.dims.blocks), layers = static_cast<double>(s.layers);
  auto budget = check_budget(params, 3 * b + 1 + layers * s.dims.block_ops() + 2 * b * b,
                             layers * (b * b * b + 20 * b * b) + 3 * b * b);
  if (!budget) return budget.error();
  return LayerBuilder(s).build();
}

}  // namespace gantry
