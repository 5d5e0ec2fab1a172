#include "workloads/model_config.hpp"

#include <algorithm>
#include <initializer_list>
#include <utility>

namespace gantry {

const char* to_string(ModelFamily family) {
  switch (family) {
    case ModelFamily::llama: return "llama";
    case ModelFamily::mixtral: return "mixtral";
    case ModelFamily::jamba: return "jamba";
    case ModelFamily::nemotron_h: return "nemotron-h";
    case ModelFamily::qwen_moe: return "qwen-moe";
    case ModelFamily::mamba: return "mamba";
    case ModelFamily::mamba2: return "mamba2";
    case ModelFamily::bamba: return "bamba";
  }
  return "?";
}

std::vector<BodyLayer> llama_layout(int layers, bool moe) {
  std::vector<BodyLayer> body;
  for (int i = 0; i < layers; ++i) {
    body.push_back({i, LayerType::attention});
    body.push_back({i, moe ? LayerType::moe : LayerType::mlp});
  }
  return body;
}

std::vector<BodyLayer> qwen_moe_layout(int layers, int sparse_step, const std::vector<int>& dense_layers) {
  std::vector<BodyLayer> body;
  for (int i = 0; i < layers; ++i) {
    const bool dense = std::find(dense_layers.begin(), dense_layers.end(), i) != dense_layers.end();
    body.push_back({i, LayerType::attention});
    body.push_back({i, !dense && (i + 1) % sparse_step == 0 ? LayerType::moe : LayerType::mlp});
  }
  return body;
}

std::vector<BodyLayer> mamba_layout(int layers, LayerType type) {
  std::vector<BodyLayer> body;
  for (int i = 0; i < layers; ++i) body.push_back({i, type});
  return body;
}

std::vector<BodyLayer> bamba_layout(int layers, const std::vector<int>& attention_layers) {
  std::vector<BodyLayer> body;
  for (int i = 0; i < layers; ++i) {
    const bool attention = std::find(attention_layers.begin(), attention_layers.end(), i) != attention_layers.end();
    body.push_back({i, attention ? LayerType::attention : LayerType::mamba2});
    body.push_back({i, LayerType::mlp});
  }
  return body;
}

std::vector<BodyLayer> jamba_layout(int layers, int attn_period, int attn_offset, int expert_period,
                                    int expert_offset) {
  std::vector<BodyLayer> body;
  for (int i = 0; i < layers; ++i) {
    body.push_back({i, i % attn_period == attn_offset ? LayerType::attention : LayerType::mamba1});
    body.push_back({i, i % expert_period == expert_offset ? LayerType::moe : LayerType::mlp});
  }
  return body;
}

Result<std::vector<BodyLayer>> nemotron_h_layout(const std::string& pattern, const std::string& source) {
  if (pattern.empty()) return make_error(source + ": hybrid_override_pattern is empty");
  std::vector<BodyLayer> body;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    LayerType type;
    switch (pattern[i]) {
      case 'M': type = LayerType::mamba2; break;
      case '*': type = LayerType::attention; break;
      case '-': type = LayerType::mlp; break;
      case 'E': type = LayerType::moe; break;
      default:
        return make_error(source + ": hybrid_override_pattern has '" + std::string(1, pattern[i]) +
                          "' at position " + std::to_string(i) +
                          "; known layers are M (mamba2), * (attention), - (mlp), E (moe)");
    }
    body.push_back({static_cast<int>(i), type});
  }
  return body;
}

namespace {

// "source: <name> must be positive (got 0) for its <type> layers".
Status need_positive(std::int64_t value, const char* name, const char* what, const std::string& source) {
  if (value > 0) return Ok{};
  return make_error(source + ": " + name + " must be positive for its " + what + " layers (got " +
                    std::to_string(value) + ")");
}

}  // namespace

Status check_model_config(const ModelConfig& c, const std::string& source) {
  if (c.body.empty()) return make_error(source + ": the model has no decoder layers");
  for (auto [value, name] : {std::pair{c.hidden, "hidden size"}, std::pair{c.vocab, "vocab size"}})
    if (auto s = need_positive(value, name, "all", source); !s) return s;
  bool has[7] = {};
  for (const BodyLayer& layer : c.body) has[static_cast<int>(layer.type)] = true;
  auto check = [&](LayerType type, std::initializer_list<std::pair<std::int64_t, const char*>> fields) -> Status {
    if (!has[static_cast<int>(type)]) return Ok{};
    for (auto [value, name] : fields)
      if (auto s = need_positive(value, name, to_string(type), source); !s) return s;
    return Ok{};
  };
  using P = std::pair<std::int64_t, const char*>;
  if (auto s = check(LayerType::attention, {P{c.heads, "attention heads"}, P{c.kv_heads, "key-value heads"},
                                            P{c.head_dim, "head dim"}});
      !s)
    return s;
  if (has[static_cast<int>(LayerType::attention)] && c.heads % c.kv_heads != 0)
    return make_error(source + ": attention heads (" + std::to_string(c.heads) +
                      ") is not a multiple of key-value heads (" + std::to_string(c.kv_heads) + ")");
  if (auto s = check(LayerType::mlp, {P{c.ffn, "FFN size"}}); !s) return s;
  if (auto s = check(LayerType::moe, {P{c.experts, "expert count"}, P{c.experts_per_token, "experts per token"},
                                      P{c.moe_ffn, "expert FFN size"}});
      !s)
    return s;
  if (has[static_cast<int>(LayerType::moe)] && c.experts_per_token > c.experts)
    return make_error(source + ": experts per token (" + std::to_string(c.experts_per_token) +
                      ") exceeds the expert count (" + std::to_string(c.experts) + ")");
  if (auto s = check(LayerType::mamba1, {P{c.mamba_inner, "mamba inner size"}, P{c.mamba_state, "mamba state size"},
                                         P{c.mamba_conv, "mamba conv width"}, P{c.mamba_dt_rank, "mamba dt rank"}});
      !s)
    return s;
  if (auto s = check(LayerType::mamba2, {P{c.mamba_inner, "mamba inner size"}, P{c.mamba_state, "mamba state size"},
                                         P{c.mamba_conv, "mamba conv width"}, P{c.mamba_heads, "mamba heads"},
                                         P{c.mamba_groups, "mamba groups"}});
      !s)
    return s;
  return Ok{};
}

}  // namespace gantry
