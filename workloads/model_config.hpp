#pragma once
// The architecture of a catalog model, as the few numbers its layer costs need. Catalog entries
// and Hugging Face config.json files both become a ModelConfig; layer_costs() turns it into the
// pipeline layer list, so both paths give the very same layers. A family is a layer layout:
// several Hugging Face architectures share one (Mistral, Qwen2 and Qwen3 are Llama's).
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "workloads/model_catalog.hpp"

namespace gantry {

enum class ModelFamily { llama, mixtral, qwen_moe, jamba, nemotron_h, mamba, mamba2, bamba };
const char* to_string(ModelFamily family);

// One decoder record: `index` is the decoder layer it belongs to (a Llama layer gives two records
// with the same index: its attention and its MLP), `type` what it computes.
struct BodyLayer {
  int index = 0;
  LayerType type = LayerType::mlp;
};

struct ModelConfig {
  std::string name;
  ModelFamily family = ModelFamily::llama;
  std::int64_t hidden = 0;
  std::int64_t vocab = 0;
  bool tie_embeddings = false;  // lm head shares the embedding matrix (counted once)

  // Attention (grouped-query): heads x head_dim queries, kv_heads x head_dim keys and values.
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  bool qkv_bias = false;  // biases on the q, k and v projections (Qwen2)
  bool qk_norm = false;   // RMSNorms of width head_dim on q and k (Qwen3)

  // Dense FFN: gated = SwiGLU (gate, up, down), else up/down with squared ReLU (Nemotron-H).
  std::int64_t ffn = 0;
  bool gated_ffn = true;

  // MoE: `experts` routed experts of `moe_ffn`, `experts_per_token` active, optional shared expert.
  std::int64_t experts = 0;
  std::int64_t experts_per_token = 0;
  std::int64_t moe_ffn = 0;
  std::int64_t shared_expert_ffn = 0;
  bool shared_expert_gate = false;  // a sigmoid gate h -> 1 on the shared expert's output (Qwen2-MoE)
  bool gated_experts = true;

  // Mamba (mamba1: Jamba's selective scan; mamba2: SSD). inner = d_in (expand x hidden).
  std::int64_t mamba_inner = 0;
  std::int64_t mamba_state = 0;    // N
  std::int64_t mamba_conv = 0;     // conv kernel width
  std::int64_t mamba_dt_rank = 0;  // Mamba-1 only: R
  std::int64_t mamba_heads = 0;    // Mamba-2 only: H
  std::int64_t mamba_groups = 0;   // Mamba-2 only: G
  bool mamba_conv_bias = true;
  bool mamba_dt_bc_norms = false;  // Mamba-1: RMSNorms on dt, B and C (Jamba's; Mamba's own have none)

  std::vector<BodyLayer> body;  // decoder records in order (without embedding and logits)
};

// Decoder layouts of the families, as their Hugging Face configs describe them.
// Llama / Mixtral: per layer an attention record and an FFN record (mlp, or moe when `moe`).
std::vector<BodyLayer> llama_layout(int layers, bool moe);
// Qwen2-MoE / Qwen3-MoE: per layer attention, then moe where (i + 1) % sparse_step == 0 and i is
// not in `dense_layers`, else mlp.
std::vector<BodyLayer> qwen_moe_layout(int layers, int sparse_step, const std::vector<int>& dense_layers);
// Mamba / Mamba-2: one mixer record per layer (`type` mamba1 or mamba2), no FFN.
std::vector<BodyLayer> mamba_layout(int layers, LayerType type);
// Bamba: per layer a mixer (attention at `attention_layers`, else mamba2) and an mlp.
std::vector<BodyLayer> bamba_layout(int layers, const std::vector<int>& attention_layers);
// Jamba: per layer a mixer (attention where i % attn_period == attn_offset, else mamba1) and an
// FFN (moe where i % expert_period == expert_offset, else mlp).
std::vector<BodyLayer> jamba_layout(int layers, int attn_period, int attn_offset, int expert_period,
                                    int expert_offset);
// Nemotron-H: one record per pattern character (M mamba2, * attention, - mlp, E moe); any other
// character is an Error naming `source`.
Result<std::vector<BodyLayer>> nemotron_h_layout(const std::string& pattern, const std::string& source);

// Checks that the numbers the body's layer types need are positive and consistent.
Status check_model_config(const ModelConfig& config, const std::string& source);

// The pipeline layers: embedding, body, logits+loss.
Result<std::vector<LayerCost>> layer_costs(const ModelConfig& config, const ModelShape& shape);

// The catalog's configs (model_catalog.cpp) and the config.json reader (hf_config.cpp).
Result<ModelConfig> catalog_model_config(const std::string& name);
Result<ModelConfig> parse_hf_config(const std::string& json_text, const std::string& source);

}  // namespace gantry
