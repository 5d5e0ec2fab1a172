#pragma once
// The heterogeneous model catalog for pipeline parallelism: a model is a list of pipeline layers
// (units a stage can hold) with per-microbatch costs: forward F, input-gradient B and
// weight-gradient W FLOPs, activation bytes held from F to B and from B to W, parameters and the
// bytes sent to the next stage. Catalog entries are real published configs (llama-3, mixtral,
// jamba, nemotron-h); model_layers_from_hf_config reads the same families from a Hugging Face
// config.json. Formulas and approximations: docs/models.md and layer_costs.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gantry {

enum class LayerType { embedding, attention, mamba1, mamba2, mlp, moe, logits };
const char* to_string(LayerType type);

// The size of one microbatch: `microbatch` sequences of `seq` tokens, activations in `dtype_bytes`.
struct ModelShape {
  std::int64_t seq = 4096;
  std::int64_t microbatch = 1;
  double dtype_bytes = 2;  // bf16
};

// One pipeline layer (a unit that can be put in a stage): costs per microbatch of `microbatch`
// sequences of `seq` tokens. FLOPs obey forward + input_grad + weight_grad == 3 x forward.
struct LayerCost {
  std::string name;             // e.g. "L12.mamba2", "embedding", "logits+loss"
  LayerType type = LayerType::mlp;
  double forward_flops = 0;     // F
  double input_grad_flops = 0;  // B (dgrad): GEMM parts = F, weight-free parts (attention core,
                                // SSM scan, conv) = 2x their forward, all in B
  double weight_grad_flops = 0; // W (wgrad): GEMM parts = F; no weight-free parts
  double activation_bytes = 0;  // allocated by F, held until B
  double held_after_b_bytes = 0;// part of activation_bytes still held from B until W: the inputs
                                // of the weight GEMMs (W = X^T dY needs X)
  double w_grad_bytes = 0;      // not part of activation_bytes: the output gradients dY of the
                                // weight GEMMs, produced by B and kept until W. A split-backward
                                // (zero-bubble) memory model adds them at B and frees them at W;
                                // a fused BW never holds them.
  double params = 0;            // parameter count
  double output_bytes = 0;      // activation sent to the next stage: seq*microbatch*hidden*dtype
                                // (0 for logits+loss, the last layer)
};

struct ModelInfo {
  std::string name;         // catalog key, e.g. "llama-3-8b"
  std::string family;       // its layout: "llama", "mixtral", "qwen-moe", "jamba", "nemotron-h", "mamba", "mamba2", "bamba"
  std::string description;
  double published_params;  // the size its authors publish (see model_catalog.cpp for sources)
  std::string hf_id;        // the Hugging Face repository of its config.json
};

// llama-3-8b, llama-3-70b, mixtral-8x7b, jamba-v0.1, nemotron-h-8b, nemotron-h-47b, nemotron-h-56b, and the
// models of configs/models/ (built in): mistral-7b-v0.1, qwen2-7b, qwen3-8b, qwen1.5-moe-a2.7b,
// qwen3-30b-a3b, mamba-2.8b, falcon-mamba-7b, mamba-codestral-7b-v0.1, bamba-9b.
const std::vector<ModelInfo>& model_catalog();

// The pipeline layers of a catalog model: an `embedding` pseudo-layer, the decoder layers, and a
// `logits+loss` pseudo-layer. An unknown name is an Error that lists the catalog.
Result<std::vector<LayerCost>> model_layers(const std::string& name, const ModelShape& shape = {});

// The same list from a Hugging Face config.json of LlamaForCausalLM, MixtralForCausalLM,
// JambaForCausalLM or NemotronHForCausalLM (detected by "architectures", else "model_type").
// Unknown fields are ignored; a missing or malformed required field is an Error naming `source`
// and the field.
Result<std::vector<LayerCost>> model_layers_from_hf_config(const std::string& json_text,
                                                           const std::string& source,
                                                           const ModelShape& shape = {});

double total_params(const std::vector<LayerCost>& layers);

}  // namespace gantry
