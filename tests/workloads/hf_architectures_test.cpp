// The Hugging Face architectures beyond the catalog's models: their config.json files give
// the published parameter counts and the layer layouts their modeling code builds.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/json_util.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/model_config.hpp"

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

// configs/models/NAME.json: the shape fields of real config.json files (README.md there).
std::string config(const std::string& name) {
  const std::string path = std::string(GANTRY_SOURCE_DIR) + "/configs/models/" + name + ".json";
  auto text = read_text_file(path);
  INFO(path);
  REQUIRE(text.ok());
  return text.value();
}

}  // namespace

TEST_CASE("Hugging Face architectures beyond the catalog give their published parameter counts", "[workloads]") {
  // Published: the parameter counts Hugging Face shows for the checkpoints, or the model cards'.
  struct Case {
    const char* name;
    std::string json;
    double published, tolerance;
  };
  for (const Case& c : {Case{"Mistral-7B-v0.1", config("mistral-7b-v0.1"), 7.24e9, 0.005}, Case{"Qwen2-7B", config("qwen2-7b"), 7.62e9, 0.005},
                        Case{"Qwen3-8B (card: 8.2B)", config("qwen3-8b"), 8.2e9, 0.01},
                        Case{"mamba-2.8b-hf", config("mamba-2.8b"), 2.77e9, 0.01},
                        Case{"falcon-mamba-7b", config("falcon-mamba-7b"), 7.27e9, 0.005},
                        Case{"Mamba-Codestral-7B-v0.1 (exact)", config("mamba-codestral-7b-v0.1"), 7285403648.0, 1e-9},
                        Case{"Bamba-9B (card: 9.78B)", config("bamba-9b"), 9.78e9, 0.005},
                        Case{"Qwen1.5-MoE-A2.7B (card: 14.3B)", config("qwen1.5-moe-a2.7b"), 14.3e9, 0.005},
                        Case{"Qwen3-30B-A3B (30.5B)", config("qwen3-30b-a3b"), 30.5e9, 0.005}}) {
    INFO(c.name);
    const double params = total_params(layers_from(c.json));
    INFO("counted " << params);
    CHECK(std::abs(params - c.published) <= c.tolerance * c.published);
  }
}

TEST_CASE("the configs/models files are in the catalog, built in, with their families", "[workloads]") {
  for (const char* name : {"mistral-7b-v0.1", "qwen2-7b", "qwen3-8b", "qwen1.5-moe-a2.7b", "qwen3-30b-a3b", "mamba-2.8b",
                           "falcon-mamba-7b", "mamba-codestral-7b-v0.1", "bamba-9b"}) {
    INFO(name);
    auto built_in = model_layers(name, ModelShape{4096, 1, 2});
    REQUIRE(built_in.ok());
    const auto from_file = layers_from(config(name));
    REQUIRE(built_in.value().size() == from_file.size());
    CHECK(total_params(built_in.value()) == total_params(from_file));
    CHECK(built_in.value()[1].forward_flops == from_file[1].forward_flops);
  }
  for (const ModelInfo& info : model_catalog()) {
    INFO(info.name);
    auto config = catalog_model_config(info.name);
    REQUIRE(config.ok());
    CHECK(info.family == to_string(config.value().family));
  }
}

TEST_CASE("Hugging Face architectures build the layouts of their modeling code", "[workloads]") {
  using T = LayerType;
  SECTION("Bamba: attention at attn_layer_indices, Mamba-2 elsewhere, an MLP after each") {
    const auto types = body_types(layers_from(config("bamba-9b")));
    REQUIRE(types.size() == 64);
    for (int i = 0; i < 32; ++i) {
      INFO(i);
      CHECK(types[2 * i] == (i == 9 || i == 18 || i == 27 ? T::attention : T::mamba2));
      CHECK(types[2 * i + 1] == T::mlp);
    }
  }
  SECTION("Mamba and Mamba-2: one mixer per layer, no FFN") {
    CHECK(body_types(layers_from(config("mamba-2.8b"))) == std::vector<T>(64, T::mamba1));
    CHECK(body_types(layers_from(config("mamba-codestral-7b-v0.1"))) == std::vector<T>(64, T::mamba2));
  }
  SECTION("Qwen MoE: sparse every decoder_sparse_step-th layer, except mlp_only_layers") {
    std::string json = config("qwen1.5-moe-a2.7b");
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
    const auto layers = layers_from(config("qwen3-30b-a3b"));
    const double h = 2048, q = 32 * 128, kv = 4 * 128;
    CHECK(layers[1].params == h + 2 * h * q + 2 * h * kv + 2 * 128);
  }
}

TEST_CASE("absent fields take the defaults of the architectures' transformers config classes", "[workloads]") {
  const double h = 2048;
  const auto attention_params = [&](const std::string& json) { return layers_from(json)[1].params; };
  const std::string shape = R"("hidden_size": 2048, "num_hidden_layers": 1, "num_attention_heads": 32,
      "num_key_value_heads": 4, "vocab_size": 100, "intermediate_size": 64)";
  // Qwen3Config: head_dim 128 (not 2048 / 32 = 64); Qwen3MoeConfig has none: hidden / heads.
  CHECK(attention_params(R"({"model_type": "qwen3", )" + shape + "}") == h + 2 * h * 32 * 128 + 2 * h * 4 * 128 + 2 * 128);
  CHECK(attention_params(R"({"model_type": "qwen3_moe", "num_experts": 0, )" + shape + "}") ==
        h + 2 * h * 32 * 64 + 2 * h * 4 * 64 + 2 * 64);
  // BambaConfig: 8 key-value heads.
  const auto bamba = layers_from(R"({"model_type": "bamba", "hidden_size": 256, "num_hidden_layers": 1,
      "attn_layer_indices": [0], "num_attention_heads": 16, "intermediate_size": 64, "vocab_size": 100,
      "mamba_n_heads": 8})");
  CHECK(bamba[1].params == 256 + 2 * 256 * 256 + 2 * 256 * 8 * 16);
  // Mamba2Config: head_dim 64 when absent ("auto": inner / heads); 8 x 64 = 2 x 256.
  const std::string mamba2 = R"({"model_type": "mamba2", "hidden_size": 256, "num_hidden_layers": 1, "vocab_size": 100,
      "num_heads": 8, "state_size": 16, "n_groups": 1)";
  const double mamba2_params = layers_from(mamba2 + "}")[1].params;
  CHECK(layers_from(mamba2 + R"(, "head_dim": "auto"})")[1].params == mamba2_params);
  CHECK_THAT(error_of(R"({"model_type": "mamba2", "hidden_size": 256, "num_hidden_layers": 1, "vocab_size": 100,
      "num_heads": 4})"), Catch::Contains("num_heads x head_dim (256)"));
  // A MoE config must say how many experts it has (0: dense).
  CHECK_THAT(error_of(R"({"model_type": "qwen2_moe", )" + shape + "}"), Catch::Contains("num_experts"));
}

TEST_CASE("config.json errors of the other architectures name the file and the field", "[workloads]") {
  std::string json = config("mamba-codestral-7b-v0.1");
  json.replace(json.find("\"num_heads\": 128"), 16, "\"num_heads\": 100");
  CHECK_THAT(error_of(json), Catch::Contains("some/dir/config.json") && Catch::Contains("num_heads x head_dim"));
  json = config("bamba-9b");
  json.replace(json.find("[9, 18, 27]"), 11, "[9, \"x\"]");
  CHECK_THAT(error_of(json), Catch::Contains("attn_layer_indices"));
  json = config("mamba-2.8b");
  json.replace(json.find("\"time_step_rank\": 160"), 21, "\"time_step_rank\": \"big\"");
  CHECK_THAT(error_of(json), Catch::Contains("time_step_rank"));
  json = config("qwen1.5-moe-a2.7b");
  json.erase(json.find("\"moe_intermediate_size\": 1408,"), 30);
  CHECK_THAT(error_of(json), Catch::Contains("moe_intermediate_size"));
  CHECK_THAT(error_of(R"({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"})"),
             Catch::Contains("BambaForCausalLM") && Catch::Contains("Qwen3MoeForCausalLM"));
}
