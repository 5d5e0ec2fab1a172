// The Hugging Face architectures beyond the catalog's models: their config.json files give
// the published parameter counts and the layer layouts their modeling code builds.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "workloads/model_catalog.hpp"

using namespace gantry;

namespace {

std::vector<LayerCost> layers_from(const std::string& json) {
  auto layers = model_layers_from_hf_config(json, "test/config.json", ModelShape{4096, 1, 2});
  INFO(layers.error().message);
  REQUIRE(layers.ok());
  return std::move(layers).value();
}

std::string error_of(const std::string& json) {
  auto layers = model_layers_from_hf_config(json, "some/dir/config.json");
  REQUIRE_FALSE(layers.ok());
  return layers.error().message;
}

std::vector<LayerType> body_types(const std::vector<LayerCost>& layers) {
  std::vector<LayerType> out;
  for (std::size_t i = 1; i + 1 < layers.size(); ++i) out.push_back(layers[i].type);
  return out;
}

// The shape fields of real config.json files (token ids, rope and dropout settings left out).
const char* const kMistral7b = R"({"architectures": ["MistralForCausalLM"], "model_type": "mistral",
  "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
  "num_key_value_heads": 8, "vocab_size": 32000, "tie_word_embeddings": false, "sliding_window": 4096})";
const char* const kQwen2_7b = R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
  "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
  "num_key_value_heads": 4, "vocab_size": 152064, "tie_word_embeddings": false, "max_window_layers": 28})";
const char* const kQwen3_8b = R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
  "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36, "num_attention_heads": 32,
  "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": false,
  "attention_bias": false})";
// No tie_word_embeddings key: Mamba ties by default.
const char* const kMamba2_8b = R"({"architectures": ["MambaForCausalLM"], "model_type": "mamba",
  "hidden_size": 2560, "state_size": 16, "expand": 2, "intermediate_size": 5120, "conv_kernel": 4,
  "time_step_rank": 160, "num_hidden_layers": 64, "n_layer": 64, "vocab_size": 50280, "use_conv_bias": true,
  "use_bias": false})";
// "expand": 16 but "intermediate_size": 8192, which is what the checkpoint holds.
const char* const kFalconMamba7b = R"({"architectures": ["FalconMambaForCausalLM"], "model_type": "falcon_mamba",
  "hidden_size": 4096, "state_size": 16, "expand": 16, "intermediate_size": 8192, "conv_kernel": 4,
  "time_step_rank": 256, "num_hidden_layers": 64, "vocab_size": 65024, "use_conv_bias": true, "use_bias": false,
  "tie_word_embeddings": false})";
const char* const kMambaCodestral7b = R"({"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2",
  "hidden_size": 4096, "num_heads": 128, "head_dim": 64, "state_size": 128, "n_groups": 8, "conv_kernel": 4,
  "expand": 2, "num_hidden_layers": 64, "vocab_size": 32768, "use_conv_bias": true, "use_bias": false,
  "tie_word_embeddings": false})";
const char* const kBamba9b = R"({"architectures": ["BambaForCausalLM"], "model_type": "bamba",
  "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
  "num_key_value_heads": 8, "attn_layer_indices": [9, 18, 27], "mamba_n_heads": 128, "mamba_d_head": 64,
  "mamba_d_state": 128, "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2, "vocab_size": 128000,
  "tie_word_embeddings": false})";
const char* const kQwen15MoeA27b = R"({"architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe",
  "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
  "intermediate_size": 5632, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
  "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 1, "vocab_size": 151936,
  "tie_word_embeddings": false})";
const char* const kQwen3_30bA3b = R"({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
  "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4,
  "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
  "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936,
  "tie_word_embeddings": false})";

}  // namespace

TEST_CASE("Hugging Face architectures beyond the catalog give their published parameter counts", "[workloads]") {
  // Published: the parameter counts Hugging Face shows for the checkpoints, or the model cards'.
  struct Case {
    const char* name;
    const char* json;
    double published, tolerance;
  };
  for (const Case& c : {Case{"Mistral-7B-v0.1", kMistral7b, 7.24e9, 0.005}, Case{"Qwen2-7B", kQwen2_7b, 7.62e9, 0.005},
                        Case{"Qwen3-8B (card: 8.2B)", kQwen3_8b, 8.2e9, 0.01},
                        Case{"mamba-2.8b-hf", kMamba2_8b, 2.77e9, 0.01},
                        Case{"falcon-mamba-7b", kFalconMamba7b, 7.27e9, 0.005},
                        Case{"Mamba-Codestral-7B-v0.1 (exact)", kMambaCodestral7b, 7285403648.0, 1e-9},
                        Case{"Bamba-9B (card: 9.78B)", kBamba9b, 9.78e9, 0.005},
                        Case{"Qwen1.5-MoE-A2.7B (card: 14.3B)", kQwen15MoeA27b, 14.3e9, 0.005},
                        Case{"Qwen3-30B-A3B (30.5B)", kQwen3_30bA3b, 30.5e9, 0.005}}) {
    INFO(c.name);
    const double params = total_params(layers_from(c.json));
    INFO("counted " << params);
    CHECK(std::abs(params - c.published) <= c.tolerance * c.published);
  }
}

TEST_CASE("Hugging Face architectures build the layouts of their modeling code", "[workloads]") {
  using T = LayerType;
  SECTION("Bamba: attention at attn_layer_indices, Mamba-2 elsewhere, an MLP after each") {
    const auto types = body_types(layers_from(kBamba9b));
    REQUIRE(types.size() == 64);
    for (int i = 0; i < 32; ++i) {
      INFO(i);
      CHECK(types[2 * i] == (i == 9 || i == 18 || i == 27 ? T::attention : T::mamba2));
      CHECK(types[2 * i + 1] == T::mlp);
    }
  }
  SECTION("Mamba and Mamba-2: one mixer per layer, no FFN") {
    CHECK(body_types(layers_from(kMamba2_8b)) == std::vector<T>(64, T::mamba1));
    CHECK(body_types(layers_from(kMambaCodestral7b)) == std::vector<T>(64, T::mamba2));
  }
  SECTION("Qwen MoE: sparse every decoder_sparse_step-th layer, except mlp_only_layers") {
    std::string json = kQwen15MoeA27b;
    json.replace(json.find("\"decoder_sparse_step\": 1"), 24, "\"decoder_sparse_step\": 2, \"mlp_only_layers\": [3]");
    const auto types = body_types(layers_from(json));
    REQUIRE(types.size() == 48);
    for (int i = 0; i < 24; ++i) {
      INFO(i);
      CHECK(types[2 * i] == T::attention);
      CHECK(types[2 * i + 1] == ((i + 1) % 2 == 0 && i != 3 ? T::moe : T::mlp));
    }
  }
  SECTION("a dense Qwen MoE layer is an MLP of intermediate_size; a sparse one adds the shared expert and its gate") {
    const auto layers = layers_from(R"({"model_type": "qwen2_moe", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "intermediate_size": 96, "moe_intermediate_size": 16,
        "shared_expert_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2, "mlp_only_layers": [0],
        "vocab_size": 100})");
    REQUIRE(layers.size() == 6);
    const double h = 64;
    CHECK(layers[1].params == h + 4 * h * h + 3 * h);  // norm, q k v o, Qwen2's q k v biases
    CHECK(layers[2].type == T::mlp);
    CHECK(layers[2].params == h + 3 * h * 96);
    CHECK(layers[4].type == T::moe);
    CHECK(layers[4].params == h + h * 4 + 4 * 3 * h * 16 + 3 * h * 32 + h);  // norm, router, experts, shared, gate
  }
  SECTION("Qwen3: q and k norms of head_dim, which need not be hidden / heads") {
    const auto layers = layers_from(kQwen3_30bA3b);
    const double h = 2048, q = 32 * 128, kv = 4 * 128;
    CHECK(layers[1].params == h + 2 * h * q + 2 * h * kv + 2 * 128);
  }
}

TEST_CASE("config.json errors of the other architectures name the file and the field", "[workloads]") {
  std::string json = kMambaCodestral7b;
  json.replace(json.find("\"num_heads\": 128"), 16, "\"num_heads\": 100");
  CHECK_THAT(error_of(json), Catch::Contains("some/dir/config.json") && Catch::Contains("num_heads x head_dim"));
  json = kBamba9b;
  json.replace(json.find("[9, 18, 27]"), 11, "[9, \"x\"]");
  CHECK_THAT(error_of(json), Catch::Contains("attn_layer_indices"));
  json = kMamba2_8b;
  json.replace(json.find("\"time_step_rank\": 160"), 21, "\"time_step_rank\": \"big\"");
  CHECK_THAT(error_of(json), Catch::Contains("time_step_rank"));
  json = kQwen15MoeA27b;
  json.erase(json.find("\"moe_intermediate_size\": 1408,"), 30);
  CHECK_THAT(error_of(json), Catch::Contains("moe_intermediate_size"));
  CHECK_THAT(error_of(R"({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"})"),
             Catch::Contains("BambaForCausalLM") && Catch::Contains("Qwen3MoeForCausalLM"));
}
