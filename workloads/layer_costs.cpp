// Per-layer costs of a ModelConfig (formulas and approximations: docs/models.md).
//
// FLOPs: Megatron's num_floating_point_operations formulas, per token, times the tokens of a
// microbatch (seq x microbatch). Every layer's forward is split into a GEMM part (has weights) and
// a weight-free part (attention core, SSM scan, depthwise conv). Backward: B = GEMM + 2 x weight-free,
// W = GEMM, so F + B + W = 3F exactly. Norms, activations, residual adds, RoPE, softmax and the loss
// are memory-bound and not counted (as in Megatron).
//
// Memory: the tensors a layer saves for its backward, each named below, in dtype_bytes per element
// (fp32 where the kernels keep fp32). Recomputation is off; attention uses a flash kernel (no s^2
// terms); no dropout. held_after_b is the part of them W still reads: the inputs X of the weight
// GEMMs (dW = X^T dY). w_grad_bytes are the dY of those GEMMs, which B produces and W consumes.
// Check against zero-bubble's runtime estimate for a transformer layer (F +34h, W frees 32h bytes
// per token): Llama-3-8B's attention + mlp records give 34.0h saved, 13h of it held after B,
// plus 21h of dY, so 34h are held from B to W.
#include <cmath>

#include "workloads/model_config.hpp"

namespace gantry {

namespace {

// Per-token costs of one layer; FLOPs in FLOPs, memory in bytes.
struct TokenCost {
  double gemm_flops = 0;         // forward FLOPs of weight GEMMs
  double free_flops = 0;         // forward FLOPs of weight-free parts
  double saved_bytes = 0;        // activation_bytes per token
  double gemm_input_bytes = 0;   // held_after_b per token
  double gemm_dy_bytes = 0;      // w_grad_bytes per token
  double params = 0;
};

constexpr double kFp32 = 4;

TokenCost attention_cost(const ModelConfig& c, double seq, double e) {
  const double h = c.hidden, q = double(c.heads) * c.head_dim, kv = double(c.kv_heads) * c.head_dim;
  TokenCost t;
  // q and o: 2*h*q each, k and v: 2*h*kv each; = Megatron's 4hp(h + h g/n).
  t.gemm_flops = 4 * h * q + 4 * h * kv;
  // QK^T and PV over a causal mask: 2 x 2*s*q / 2 (Megatron's 2*s*h*p).
  t.free_flops = 2 * seq * q;
  // Saved: norm input, q/k/v GEMM input, q, k, v (flash keeps them), attention output (flash output
  // and o-proj input), fp32 log-sum-exp per head. For MHA with dropout masks this is Korthikanti's
  // 11 + 2 (norm) sbh; GQA makes k and v smaller.
  t.saved_bytes = e * (h + h + q + 2 * kv + q) + kFp32 * c.heads;
  t.gemm_input_bytes = e * (h + q);            // q/k/v GEMM input, o-proj input
  t.gemm_dy_bytes = e * (q + 2 * kv + h);      // dq, dk, dv, d(o-proj out)
  t.params = h                                 // norm
             + h * q + 2 * h * kv + q * h      // q, k, v, o
             + (c.qkv_bias ? q + 2 * kv : 0)   // Qwen2's q, k, v biases
             + (c.qk_norm ? 2.0 * c.head_dim : 0);  // Qwen3's q and k norms
  return t;
}

// One FFN of width f: gated (SwiGLU: gate, up, down) or not (squared ReLU: up, down).
struct FfnCost {
  double flops, saved_elems, input_elems, dy_elems, params;
};
FfnCost ffn_cost(double h, double f, bool gated) {
  if (gated)  // saved: input, gate out, up out, silu(gate)*up (down input)
    return {6 * h * f, h + 3 * f, h + f, 2 * f + h, 3 * h * f};
  // saved: input, up out, relu(up)^2 (down input)
  return {4 * h * f, h + 2 * f, h + f, f + h, 2 * h * f};
}

TokenCost mlp_cost(const ModelConfig& c, double e) {
  const double h = c.hidden;
  const FfnCost f = ffn_cost(h, c.ffn, c.gated_ffn);
  TokenCost t;
  t.gemm_flops = f.flops;
  t.saved_bytes = e * (h + f.saved_elems);  // + the norm input
  t.gemm_input_bytes = e * f.input_elems;
  t.gemm_dy_bytes = e * f.dy_elems;
  t.params = h + f.params;
  return t;
}

TokenCost moe_cost(const ModelConfig& c, double e) {
  const double h = c.hidden, n = c.experts, k = c.experts_per_token;
  const FfnCost expert = ffn_cost(h, c.moe_ffn, c.gated_experts);
  TokenCost t;
  // Router GEMM (Megatron leaves it out; it is < 0.1%), k experts, the shared expert if any.
  t.gemm_flops = 2 * h * n + k * expert.flops;
  // Saved: norm input, router/shared input, fp32 router logits, per routed copy the expert's
  // tensors (its permuted input included) and its output (for the probability-weighted sum).
  t.saved_bytes = e * (2 * h + k * (expert.saved_elems + h)) + kFp32 * n;
  t.gemm_input_bytes = e * (h + k * expert.input_elems);
  t.gemm_dy_bytes = kFp32 * n + e * k * expert.dy_elems;
  t.params = h + h * n + n * expert.params;
  if (c.shared_expert_ffn > 0) {
    const FfnCost shared = ffn_cost(h, c.shared_expert_ffn, c.gated_experts);
    t.gemm_flops += shared.flops;
    t.saved_bytes += e * (shared.saved_elems - h);  // its input is the router's
    t.gemm_input_bytes += e * (shared.input_elems - h);
    t.gemm_dy_bytes += e * shared.dy_elems;
    t.params += shared.params;
    if (c.shared_expert_gate) {  // sigmoid(x W) scales the shared expert's output
      t.gemm_flops += 2 * h;
      t.params += h;
    }
  }
  return t;
}

// The Mamba-1 mixer (Jamba's, Mamba's): d = inner, R = dt rank, N = state, K = conv width.
TokenCost mamba1_cost(const ModelConfig& c, double e) {
  const double h = c.hidden, d = c.mamba_inner, r = c.mamba_dt_rank, n = c.mamba_state, k = c.mamba_conv;
  TokenCost t;
  // in_proj h->2d, x_proj d->R+2N, dt_proj R->d, out_proj d->h.
  t.gemm_flops = 2 * h * 2 * d + 2 * d * (r + 2 * n) + 2 * r * d + 2 * d * h;
  // depthwise conv, selective scan (about 9 FLOPs per state element; docs/models.md).
  t.free_flops = 2 * d * k + 9 * d * n;
  // Saved: norm input, in_proj input, in_proj out (x, z), conv out, x_proj out (dt, B, C),
  // dt_proj out (delta), scan out y, y*silu(z) (out_proj input).
  t.saved_bytes = e * (h + h + 2 * d + d + (r + 2 * n) + d + d + d);
  t.gemm_input_bytes = e * (h + d + r + d);  // in_proj, x_proj, dt_proj, out_proj inputs
  t.gemm_dy_bytes = e * (2 * d + (r + 2 * n) + d + h);
  t.params = h                               // norm
             + h * 2 * d                     // in_proj
             + d * k + (c.mamba_conv_bias ? d : 0)
             + d * (r + 2 * n)               // x_proj
             + r * d + d                     // dt_proj with bias
             + d * n + d                     // A_log, D
             + (c.mamba_dt_bc_norms ? r + 2 * n : 0)  // Jamba's dt, B, C layernorms
             + d * h;                        // out_proj
  return t;
}

// The Mamba-2 (SSD) mixer (Nemotron-H's, Mamba-2's, Bamba's): d = inner, H heads, G groups, N state, K conv width.
TokenCost mamba2_cost(const ModelConfig& c, double e) {
  const double h = c.hidden, d = c.mamba_inner, heads = c.mamba_heads, n = c.mamba_state,
               k = c.mamba_conv;
  const double gn = double(c.mamba_groups) * n;
  const double in_proj_out = 2 * d + 2 * gn + heads;  // z, x, B, C, dt
  const double conv_dim = d + 2 * gn;                  // x, B, C
  TokenCost t;
  t.gemm_flops = 2 * h * in_proj_out + 2 * d * h;     // Megatron's mamba_layer_flops
  t.free_flops = 7 * d * n + 2 * conv_dim * k;         // scan (Megatron's 7 d_in N) + conv
  // Saved: norm input, in_proj input, in_proj out, conv out, scan out y, gated-norm out (out_proj
  // input), fp32 dt and dA_cumsum per head. The chunk states are recomputed in backward.
  t.saved_bytes = e * (h + h + in_proj_out + conv_dim + d + d) + 2 * kFp32 * heads;
  t.gemm_input_bytes = e * (h + d);
  t.gemm_dy_bytes = e * (in_proj_out + h);
  t.params = h                                   // norm
             + h * in_proj_out                   // in_proj
             + conv_dim * k + (c.mamba_conv_bias ? conv_dim : 0)
             + 3 * heads                         // A_log, D, dt_bias
             + d                                 // gated RMSNorm
             + d * h;                            // out_proj
  return t;
}

TokenCost body_cost(const ModelConfig& c, LayerType type, double seq, double e) {
  switch (type) {
    case LayerType::attention: return attention_cost(c, seq, e);
    case LayerType::mlp: return mlp_cost(c, e);
    case LayerType::moe: return moe_cost(c, e);
    case LayerType::mamba1: return mamba1_cost(c, e);
    case LayerType::mamba2: return mamba2_cost(c, e);
    case LayerType::embedding:
    case LayerType::logits: break;
  }
  return {};
}

LayerCost make_layer(std::string name, LayerType type, const TokenCost& t, double tokens,
                     double output_bytes) {
  LayerCost layer;
  layer.name = std::move(name);
  layer.type = type;
  layer.forward_flops = (t.gemm_flops + t.free_flops) * tokens;
  layer.input_grad_flops = (t.gemm_flops + 2 * t.free_flops) * tokens;
  layer.weight_grad_flops = t.gemm_flops * tokens;
  layer.activation_bytes = t.saved_bytes * tokens;
  layer.held_after_b_bytes = t.gemm_input_bytes * tokens;
  layer.w_grad_bytes = t.gemm_dy_bytes * tokens;
  layer.params = t.params;
  layer.output_bytes = output_bytes;
  return layer;
}

}  // namespace

Result<std::vector<LayerCost>> layer_costs(const ModelConfig& config, const ModelShape& shape) {
  if (shape.seq < 1 || shape.microbatch < 1 || !(shape.dtype_bytes > 0) || !std::isfinite(shape.dtype_bytes))
    return make_error(config.name + ": the shape needs seq >= 1, microbatch >= 1 and dtype_bytes > 0 (got seq " +
                      std::to_string(shape.seq) + ", microbatch " + std::to_string(shape.microbatch) +
                      ", dtype_bytes " + std::to_string(shape.dtype_bytes) + ")");
  if (auto ok = check_model_config(config, config.name); !ok) return ok.error();

  const double seq = static_cast<double>(shape.seq);
  const double tokens = seq * static_cast<double>(shape.microbatch);
  const double e = shape.dtype_bytes;
  const double h = static_cast<double>(config.hidden), v = static_cast<double>(config.vocab);
  const double hidden_bytes = tokens * h * e;

  std::vector<LayerCost> layers;
  layers.reserve(config.body.size() + 2);

  // Embedding: a lookup (no FLOPs, no input gradient); W scatter-adds dY into the table (h adds per
  // token). It saves the int64 token ids, which W reads: its held_after_b is all of it.
  TokenCost embed;
  embed.saved_bytes = 8;
  embed.gemm_input_bytes = 8;
  embed.gemm_dy_bytes = e * h;
  embed.params = v * h;
  LayerCost embedding = make_layer("embedding", LayerType::embedding, embed, tokens, hidden_bytes);
  embedding.weight_grad_flops = h * tokens;
  layers.push_back(std::move(embedding));

  for (const BodyLayer& b : config.body)
    layers.push_back(make_layer("L" + std::to_string(b.index) + "." + to_string(b.type), b.type,
                                body_cost(config, b.type, seq, e), tokens, hidden_bytes));

  // Final norm, lm head (2hV per token), cross-entropy. Saved: norm input, lm-head input, the fp32
  // softmax the fused cross-entropy keeps. The lm head shares the embedding when tied.
  TokenCost logits;
  logits.gemm_flops = 2 * h * v;
  logits.saved_bytes = e * 2 * h + kFp32 * v;
  logits.gemm_input_bytes = e * h;
  logits.gemm_dy_bytes = e * v;
  logits.params = h + (config.tie_embeddings ? 0 : v * h);
  layers.push_back(make_layer("logits+loss", LayerType::logits, logits, tokens, 0));
  return layers;
}

}  // namespace gantry
