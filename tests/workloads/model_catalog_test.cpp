#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/model_catalog.hpp"

using namespace gantry;

namespace {

std::vector<LayerCost> layers_of(const std::string& name, const ModelShape& shape = {}) {
  auto layers = model_layers(name, shape);
  INFO(name << ": " << layers.error().message);
  REQUIRE(layers.ok());
  return std::move(layers).value();
}

std::vector<LayerCost> layers_from_json(const std::string& json, const ModelShape& shape = {}) {
  auto layers = model_layers_from_hf_config(json, "test/config.json", shape);
  INFO(layers.error().message);
  REQUIRE(layers.ok());
  return std::move(layers).value();
}

std::string json_error(const std::string& json) {
  auto layers = model_layers_from_hf_config(json, "some/dir/config.json");
  REQUIRE_FALSE(layers.ok());
  return layers.error().message;
}

std::map<LayerType, int> count_types(const std::vector<LayerCost>& layers) {
  std::map<LayerType, int> counts;
  for (const LayerCost& layer : layers) ++counts[layer.type];
  return counts;
}

// The decoder layer index of a "L12.mamba2" record.
int layer_index(const LayerCost& layer) { return std::stoi(layer.name.substr(1, layer.name.find('.') - 1)); }

const LayerCost& first_of(const std::vector<LayerCost>& layers, LayerType type) {
  for (const LayerCost& layer : layers)
    if (layer.type == type) return layer;
  FAIL("no layer of type " << to_string(type));
  return layers.front();
}

bool near(double a, double b, double rel) { return std::abs(a - b) <= rel * std::abs(b); }

void require_same_layers(const std::vector<LayerCost>& a, const std::vector<LayerCost>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("layer " << i << ": " << a[i].name << " vs " << b[i].name);
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].type == b[i].type);
    CHECK(a[i].forward_flops == b[i].forward_flops);
    CHECK(a[i].input_grad_flops == b[i].input_grad_flops);
    CHECK(a[i].weight_grad_flops == b[i].weight_grad_flops);
    CHECK(a[i].activation_bytes == b[i].activation_bytes);
    CHECK(a[i].held_after_b_bytes == b[i].held_after_b_bytes);
    CHECK(a[i].w_grad_bytes == b[i].w_grad_bytes);
    CHECK(a[i].params == b[i].params);
    CHECK(a[i].output_bytes == b[i].output_bytes);
  }
}

// meta-llama/Meta-Llama-3-8B config.json.
const std::string kLlama3_8b = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 8192,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 500000.0,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.40.0.dev0",
  "use_cache": true, "vocab_size": 128256
})";

// nvidia/Nemotron-H-8B-Base-8K config.json (auto_map and token ids left out).
const std::string kNemotronH8b = R"({
  "architectures": ["NemotronHForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "attention_head_dim": 128, "chunk_size": 128, "conv_kernel": 4, "expand": 2, "hidden_dropout": 0.0,
  "hidden_size": 4096,
  "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
  "initializer_range": 0.02, "intermediate_size": 21504, "layer_norm_epsilon": 1e-05,
  "mamba_head_dim": 64, "mamba_hidden_act": "silu", "mamba_num_heads": 128, "mamba_proj_bias": false,
  "max_position_embeddings": 8192, "mlp_bias": false, "mlp_hidden_act": "relu2", "model_type": "nemotron_h",
  "n_groups": 8, "num_attention_heads": 32, "num_hidden_layers": 52, "num_key_value_heads": 8,
  "rescale_prenorm_residual": true, "residual_in_fp32": false, "rms_norm_eps": 1e-05, "ssm_state_size": 128,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_bias": false, "use_conv_bias": true,
  "vocab_size": 131072
})";

// ai21labs/Jamba-v0.1 config.json (token ids left out).
const std::string kJamba = R"({
  "architectures": ["JambaForCausalLM"], "attention_dropout": 0.0, "attn_layer_offset": 4,
  "attn_layer_period": 8, "expert_layer_offset": 1, "expert_layer_period": 2, "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336, "mamba_conv_bias": true,
  "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_dt_rank": 256, "mamba_expand": 2, "mamba_proj_bias": false,
  "max_position_embeddings": 262144, "model_type": "jamba", "num_attention_heads": 32, "num_experts": 16,
  "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
  "router_aux_loss_coef": 0.001, "sliding_window": null, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "use_mamba_kernels": true, "vocab_size": 65536
})";

// mistralai/Mixtral-8x7B-v0.1 config.json, detected by model_type only.
const std::string kMixtral = R"({
  "attention_dropout": 0.0, "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32,
  "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.02, "sliding_window": null,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 32000
})";

}  // namespace

TEST_CASE("every catalog model builds with its published parameter count", "[workloads]") {
  REQUIRE(model_catalog().size() == 16);
  for (const ModelInfo& info : model_catalog()) {
    INFO(info.name);
    const auto layers = layers_of(info.name);
    REQUIRE(layers.size() >= 3);
    CHECK(layers.front().type == LayerType::embedding);
    CHECK(layers.front().name == "embedding");
    CHECK(layers.back().type == LayerType::logits);
    CHECK(layers.back().name == "logits+loss");
    std::set<std::string> names;
    for (const LayerCost& layer : layers) names.insert(layer.name);
    CHECK(names.size() == layers.size());
    // Published figures: model_catalog.cpp (Nemotron-H cards only say "8B", "47B", "56B").
    const double params = total_params(layers);
    INFO("counted " << params << ", published " << info.published_params);
    CHECK(near(params, info.published_params, 0.02));
  }
}

TEST_CASE("catalog layer layouts follow the published patterns", "[workloads]") {
  SECTION("Llama-3 and Mixtral: attention then FFN per layer") {
    for (auto [name, layers, ffn] : {std::tuple{"llama-3-8b", 32, LayerType::mlp},
                                     std::tuple{"llama-3-70b", 80, LayerType::mlp},
                                     std::tuple{"mixtral-8x7b", 32, LayerType::moe}}) {
      INFO(name);
      const auto l = layers_of(name);
      REQUIRE(l.size() == static_cast<std::size_t>(2 * layers + 2));
      for (int i = 0; i < layers; ++i) {
        CHECK(l[1 + 2 * i].type == LayerType::attention);
        CHECK(l[2 + 2 * i].type == ffn);
        CHECK(l[1 + 2 * i].name == "L" + std::to_string(i) + ".attention");
      }
    }
  }
  SECTION("Jamba-v0.1: attention at 4, 12, 20, 28; MoE at odd layers") {
    const auto l = layers_of("jamba-v0.1");
    REQUIRE(l.size() == 66);
    std::vector<int> attention, moe;
    for (const LayerCost& layer : l) {
      if (layer.type == LayerType::attention) attention.push_back(layer_index(layer));
      if (layer.type == LayerType::moe) moe.push_back(layer_index(layer));
    }
    CHECK(attention == std::vector<int>{4, 12, 20, 28});
    REQUIRE(moe.size() == 16);
    for (int i : moe) CHECK(i % 2 == 1);
    const auto counts = count_types(l);
    CHECK(counts.at(LayerType::mamba1) == 28);
    CHECK(counts.at(LayerType::mlp) == 16);
    CHECK(l[1].name == "L0.mamba1");
    CHECK(l[2].name == "L0.mlp");
  }
  SECTION("Nemotron-H: one record per pattern character") {
    struct Expect { const char* name; int mamba, mlp, attention; };
    for (const Expect& e : {Expect{"nemotron-h-8b", 24, 24, 4}, Expect{"nemotron-h-47b", 45, 48, 5},
                            Expect{"nemotron-h-56b", 54, 54, 10}}) {
      INFO(e.name);
      const auto l = layers_of(e.name);
      const auto counts = count_types(l);
      CHECK(counts.at(LayerType::mamba2) == e.mamba);
      CHECK(counts.at(LayerType::mlp) == e.mlp);
      CHECK(counts.at(LayerType::attention) == e.attention);
      CHECK(counts.count(LayerType::moe) == 0);
      CHECK(l.size() == static_cast<std::size_t>(e.mamba + e.mlp + e.attention + 2));
    }
    const auto l = layers_of("nemotron-h-8b");
    CHECK(l[1].name == "L0.mamba2");
    CHECK(l[2].name == "L1.mlp");
    CHECK(l[8].name == "L7.attention");  // "M-M-M-M*"
  }
}

TEST_CASE("F, B and W split three times the forward FLOPs", "[workloads]") {
  for (const ModelInfo& info : model_catalog()) {
    INFO(info.name);
    for (const LayerCost& layer : layers_of(info.name)) {
      INFO(layer.name);
      CHECK(layer.forward_flops >= 0);
      CHECK(layer.input_grad_flops >= 0);
      CHECK(layer.weight_grad_flops >= 0);
      if (layer.type == LayerType::embedding) {
        CHECK(layer.forward_flops == 0);  // a lookup; W scatter-adds the gradient
        CHECK(layer.weight_grad_flops > 0);
        continue;
      }
      CHECK(near(layer.forward_flops + layer.input_grad_flops + layer.weight_grad_flops, 3 * layer.forward_flops,
                 0.01));
      switch (layer.type) {
        case LayerType::mlp:
        case LayerType::moe:
        case LayerType::logits:  // GEMM only: B = W = F
          CHECK(near(layer.input_grad_flops, layer.forward_flops, 1e-12));
          CHECK(near(layer.weight_grad_flops, layer.forward_flops, 1e-12));
          break;
        default:  // attention core, scans and convs have no weights: their backward is all in B
          CHECK(layer.input_grad_flops > layer.weight_grad_flops);
          CHECK(layer.weight_grad_flops < layer.forward_flops);
      }
    }
  }
}

TEST_CASE("per-token forward FLOPs match the Megatron formulas", "[workloads]") {
  // GFLOP per token at s = 4096 from the Megatron-LM formulas (3 significant digits).
  const double tokens = 4096;
  auto gflop = [&](const std::string& model, LayerType type) {
    return first_of(layers_of(model), type).forward_flops / tokens / 1e9;
  };
  CHECK(near(gflop("llama-3-8b", LayerType::attention), 0.117, 0.01));
  CHECK(near(gflop("llama-3-8b", LayerType::mlp), 0.352, 0.01));
  CHECK(near(gflop("llama-3-70b", LayerType::attention), 0.369, 0.01));
  CHECK(near(gflop("llama-3-70b", LayerType::mlp), 1.409, 0.01));
  CHECK(near(gflop("jamba-v0.1", LayerType::mamba1), 0.211, 0.01));
  CHECK(near(gflop("jamba-v0.1", LayerType::moe), 0.705, 0.01));
  CHECK(near(gflop("mixtral-8x7b", LayerType::moe), 0.705, 0.01));
  CHECK(near(gflop("nemotron-h-8b", LayerType::mamba2), 0.226, 0.01));
  CHECK(near(gflop("nemotron-h-8b", LayerType::mlp), 0.352, 0.01));
  CHECK(near(gflop("nemotron-h-56b", LayerType::mamba2), 0.906, 0.01));
  CHECK(near(gflop("nemotron-h-56b", LayerType::mlp), 1.074, 0.01));
  CHECK(near(gflop("llama-3-8b", LayerType::logits), 2.0 * 4096 * 128256 / 1e9, 1e-9));

  SECTION("tokens scale everything linearly, the sequence also the attention core") {
    const auto one = layers_of("llama-3-8b", {2048, 1, 2});
    const auto two = layers_of("llama-3-8b", {2048, 2, 2});
    const auto longer = layers_of("llama-3-8b", {4096, 1, 2});
    for (std::size_t i = 0; i < one.size(); ++i) {
      INFO(one[i].name);
      CHECK(near(two[i].forward_flops, 2 * one[i].forward_flops, 1e-12));
      CHECK(near(two[i].activation_bytes, 2 * one[i].activation_bytes, 1e-12));
      CHECK(near(two[i].output_bytes, 2 * one[i].output_bytes, 1e-12));
      CHECK(two[i].params == one[i].params);
      // The causal core costs 2 s n d per token (docs/models.md; Llama-3-8B: n d = 32 x 128 = 4096),
      // so doubling s from 2048 adds 4096 x 2 x 4096 x 4096 - 2 x 2048 x 2 x 2048 x 4096 = 4096^3
      // beyond twice the FLOPs.
      if (one[i].type == LayerType::attention)
        CHECK(near(longer[i].forward_flops - 2 * one[i].forward_flops, 4096.0 * 4096 * 4096, 1e-9));
      else
        CHECK(near(longer[i].forward_flops, 2 * one[i].forward_flops, 1e-12));
    }
  }
}

TEST_CASE("activation memory follows the per-type model", "[workloads]") {
  const ModelShape shape;  // 4096 tokens, bf16
  const double sbh = 4096.0 * 1 * 4096;
  const std::map<std::string, double> hidden = {
      {"llama-3-8b", 4096},     {"llama-3-70b", 8192},    {"mixtral-8x7b", 4096},  {"jamba-v0.1", 4096},
      {"nemotron-h-8b", 4096}, {"nemotron-h-47b", 8192}, {"nemotron-h-56b", 8192},
      // configs/models/: hidden_size of each config.json
      {"mistral-7b-v0.1", 4096}, {"qwen2-7b", 3584}, {"qwen3-8b", 4096}, {"qwen1.5-moe-a2.7b", 2048},
      {"qwen3-30b-a3b", 2048}, {"mamba-2.8b", 2560}, {"falcon-mamba-7b", 4096}, {"mamba-codestral-7b-v0.1", 4096},
      {"bamba-9b", 4096}};
  for (const ModelInfo& info : model_catalog()) {
    INFO(info.name);
    for (const LayerCost& layer : layers_of(info.name, shape)) {
      INFO(layer.name);
      CHECK(layer.activation_bytes > 0);
      CHECK(layer.held_after_b_bytes > 0);
      CHECK(layer.w_grad_bytes > 0);
      if (layer.type == LayerType::embedding)
        CHECK(layer.held_after_b_bytes <= layer.activation_bytes);  // W reads all it saved: the ids
      else
        CHECK(layer.held_after_b_bytes < layer.activation_bytes);
      if (layer.type == LayerType::logits)
        CHECK(layer.output_bytes == 0);
      else
        CHECK(layer.output_bytes == shape.seq * shape.microbatch * hidden.at(info.name) * shape.dtype_bytes);
    }
  }
  // A Llama-3-8B transformer layer (attention + mlp records) saves Korthikanti's 34 sbh bytes with a
  // flash kernel; zero-bubble's runtime keeps 32 sbh from B to W, ours the GEMM inputs plus dY.
  const auto l = layers_of("llama-3-8b", shape);
  const LayerCost& attention = l[1];
  const LayerCost& mlp = l[2];
  CHECK(near(attention.activation_bytes + mlp.activation_bytes, 34 * sbh, 0.01));
  const double b_to_w = attention.held_after_b_bytes + mlp.held_after_b_bytes + attention.w_grad_bytes +
                        mlp.w_grad_bytes;
  CHECK(near(b_to_w, 32 * sbh, 0.10));
  // Mamba layers keep less for W than they save for B.
  const LayerCost& mamba = first_of(layers_of("nemotron-h-8b", shape), LayerType::mamba2);
  CHECK(mamba.held_after_b_bytes < 0.5 * mamba.activation_bytes);
  // dtype scales the bf16 tensors.
  const auto fp32 = layers_of("llama-3-8b", {4096, 1, 4});
  CHECK(near(fp32[2].activation_bytes, 2 * mlp.activation_bytes, 1e-12));
}

TEST_CASE("a Hugging Face config.json gives the catalog's layers", "[workloads]") {
  const ModelShape shape{2048, 2, 2};
  SECTION("llama") { require_same_layers(layers_from_json(kLlama3_8b, shape), layers_of("llama-3-8b", shape)); }
  SECTION("nemotron-h") {
    require_same_layers(layers_from_json(kNemotronH8b, shape), layers_of("nemotron-h-8b", shape));
  }
  SECTION("jamba") { require_same_layers(layers_from_json(kJamba, shape), layers_of("jamba-v0.1", shape)); }
  SECTION("mixtral, detected by model_type") {
    require_same_layers(layers_from_json(kMixtral, shape), layers_of("mixtral-8x7b", shape));
  }
  SECTION("jamba's \"auto\" dt rank is ceil(hidden / 16)") {
    std::string json = kJamba;
    json.replace(json.find("\"mamba_dt_rank\": 256"), 20, "\"mamba_dt_rank\": \"auto\"");
    require_same_layers(layers_from_json(json, shape), layers_of("jamba-v0.1", shape));
  }
  SECTION("tied embeddings are counted once") {
    std::string json = kLlama3_8b;
    json.replace(json.find("\"tie_word_embeddings\": false"), 28, "\"tie_word_embeddings\": true");
    const auto tied = layers_from_json(json, shape);
    const auto untied = layers_of("llama-3-8b", shape);
    CHECK(total_params(untied) - total_params(tied) == 128256.0 * 4096);
    CHECK(tied.back().forward_flops == untied.back().forward_flops);  // the lm head still runs
  }
  SECTION("nemotron-h MoE layers: squared-ReLU experts, router, shared expert") {
    const auto l = layers_from_json(R"({"model_type": "nemotron_h", "hybrid_override_pattern": "ME*E",
        "hidden_size": 256, "vocab_size": 1000, "num_attention_heads": 4, "num_key_value_heads": 2,
        "mamba_num_heads": 8, "mamba_head_dim": 64, "ssm_state_size": 16, "n_groups": 2, "conv_kernel": 4,
        "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
        "moe_shared_expert_intermediate_size": 512})", shape);
    REQUIRE(l.size() == 6);
    CHECK(l[2].type == LayerType::moe);
    CHECK(l[2].name == "L1.moe");
    CHECK(l[4].name == "L3.moe");
    const double h = 256, tokens = 2048 * 2;
    CHECK(l[2].params == h + h * 8 + 8 * 2 * h * 128 + 2 * h * 512);  // norm, router, experts, shared
    CHECK(l[2].forward_flops == tokens * (2 * h * 8 + 2 * 4 * h * 128 + 4 * h * 512));
  }
  SECTION("unknown fields are ignored") {
    std::string json = kLlama3_8b;
    json.insert(1, "\"some_future_field\": {\"x\": [1, 2]}, ");
    require_same_layers(layers_from_json(json, shape), layers_of("llama-3-8b", shape));
  }
}

TEST_CASE("config.json errors name the file and the field", "[workloads]") {
  SECTION("missing hidden_size") {
    std::string json = kLlama3_8b;
    json.replace(json.find("\"hidden_size\": 4096,"), 20, "");
    const std::string message = json_error(json);
    CHECK_THAT(message, Catch::Contains("some/dir/config.json"));
    CHECK_THAT(message, Catch::Contains("hidden_size"));
  }
  SECTION("missing hidden_size in nemotron-h") {
    std::string json = kNemotronH8b;
    json.replace(json.find("\"hidden_size\": 4096,"), 20, "");
    const std::string message = json_error(json);
    CHECK_THAT(message, Catch::Contains("some/dir/config.json"));
    CHECK_THAT(message, Catch::Contains("hidden_size"));
  }
  SECTION("missing mamba field") {
    std::string json = kNemotronH8b;
    json.replace(json.find("\"n_groups\": 8,"), 14, "");
    CHECK_THAT(json_error(json), Catch::Contains("n_groups"));
  }
  SECTION("wrong type") {
    std::string json = kLlama3_8b;
    json.replace(json.find("\"num_hidden_layers\": 32"), 23, "\"num_hidden_layers\": \"32\"");
    CHECK_THAT(json_error(json), Catch::Contains("num_hidden_layers"));
  }
  SECTION("pattern and layer count disagree") {
    std::string json = kNemotronH8b;
    json.replace(json.find("\"num_hidden_layers\": 52"), 23, "\"num_hidden_layers\": 50");
    CHECK_THAT(json_error(json), Catch::Contains("hybrid_override_pattern"));
  }
  SECTION("unknown pattern symbol") {
    std::string json = kNemotronH8b;
    json.replace(json.find("M-M-M-M*"), 8, "M-M-M-MG");
    CHECK_THAT(json_error(json), Catch::Contains("'G'"));
  }
  SECTION("unsupported architecture") {
    const std::string message = json_error(R"({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"})");
    CHECK_THAT(message, Catch::Contains("GPT2LMHeadModel"));
    CHECK_THAT(message, Catch::Contains("NemotronHForCausalLM"));
  }
  SECTION("not JSON") { CHECK_THAT(json_error("{\"hidden_size\": "), Catch::Contains("some/dir/config.json")); }
}

TEST_CASE("model_layers refuses unknown names and bad shapes", "[workloads]") {
  auto unknown = model_layers("gpt-5");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error().message, Catch::Contains("gpt-5"));
  for (const ModelInfo& info : model_catalog()) CHECK_THAT(unknown.error().message, Catch::Contains(info.name));
  CHECK_FALSE(model_layers("llama-3-8b", {0, 1, 2}).ok());
  CHECK_FALSE(model_layers("llama-3-8b", {4096, 0, 2}).ok());
  CHECK_FALSE(model_layers("llama-3-8b", {4096, 1, 0}).ok());
}
