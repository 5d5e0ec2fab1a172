// Hugging Face config.json -> ModelConfig for the four catalog families. Field names and defaults
// follow transformers' LlamaConfig, MixtralConfig, JambaConfig and NemotronHConfig. Fields that fix
// a weight shape or the layer layout are required; the ones real configs often leave out get
// transformers' defaults: num_key_value_heads (= num_attention_heads), head_dim (= hidden_size /
// num_attention_heads), tie_word_embeddings (false), mamba_dt_rank ("auto" = ceil(hidden/16)),
// conv biases (true). Linear-layer biases (attention_bias, mlp_bias, mamba_proj_bias) are ignored:
// all catalog models have them off.
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_util.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/model_config.hpp"

namespace gantry {

namespace {

using nlohmann::json;

// Reads fields of one config object; every error names the file, the field and the architecture.
class FieldReader {
 public:
  FieldReader(const json& config, std::string source, std::string arch)
      : config_(config), source_(std::move(source)), arch_(std::move(arch)) {}

  bool has(const char* key) const {
    auto it = config_.find(key);
    return it != config_.end() && !it->is_null();
  }

  Result<std::int64_t> integer(const char* key) const {
    if (!has(key)) return missing(key);
    return to_integer(key, config_.at(key), 0);
  }
  Result<std::int64_t> integer(const char* key, std::int64_t fallback, std::int64_t min = 1) const {
    if (!has(key)) return fallback;
    return to_integer(key, config_.at(key), min);
  }
  Result<std::int64_t> positive(const char* key) const {
    auto value = integer(key);
    if (value.ok() && value.value() < 1) return bad(key, "a positive integer", config_.at(key));
    return value;
  }
  Result<bool> boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = config_.at(key);
    if (!v.is_boolean()) return bad(key, "true or false", v);
    return v.get<bool>();
  }
  Result<std::string> string(const char* key) const {
    if (!has(key)) return missing(key);
    const json& v = config_.at(key);
    if (!v.is_string()) return bad(key, "a string", v);
    return v.get<std::string>();
  }
  Error error(const std::string& what) const { return make_error(source_ + ": " + what); }

 private:
  Result<std::int64_t> to_integer(const char* key, const json& v, std::int64_t min) const {
    std::int64_t value = 0;
    if (v.is_number_integer()) {
      value = v.get<std::int64_t>();
    } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
               std::abs(v.get<double>()) < 9e15) {
      value = static_cast<std::int64_t>(v.get<double>());
    } else {
      return bad(key, "an integer", v);
    }
    if (value < min) return bad(key, min == 0 ? "a non-negative integer" : "a positive integer", v);
    return value;
  }
  Error missing(const char* key) const {
    return make_error(source_ + ": missing required field \"" + key + "\" (needed for " + arch_ + ")");
  }
  Error bad(const char* key, const char* expected, const json& got) const {
    return make_error(source_ + ": field \"" + key + "\" must be " + expected + " (got " + got.dump() + ")");
  }

  const json& config_;
  std::string source_;
  std::string arch_;
};

// Assigns the value of a Result or returns its error from the enclosing function.
#define GANTRY_READ(target, expr)              \
  do {                                         \
    auto gantry_read_ = (expr);                \
    if (!gantry_read_.ok()) return gantry_read_.error(); \
    target = std::move(gantry_read_).value();  \
  } while (0)

int as_int(std::int64_t v) { return static_cast<int>(v); }

// A layer list is built in memory: refuse absurd depths instead of exhausting it.
constexpr std::int64_t kMaxLayers = 100000;

Result<std::int64_t> read_layer_count(const FieldReader& r) {
  auto layers = r.positive("num_hidden_layers");
  if (layers.ok() && layers.value() > kMaxLayers)
    return r.error("num_hidden_layers is " + std::to_string(layers.value()) + "; at most " +
                   std::to_string(kMaxLayers) + " are supported");
  return layers;
}

// The fields every family shares: sizes, vocab, attention shape, tying.
Status read_common(const FieldReader& r, ModelConfig& c, bool need_attention) {
  GANTRY_READ(c.hidden, r.positive("hidden_size"));
  GANTRY_READ(c.vocab, r.positive("vocab_size"));
  GANTRY_READ(c.tie_embeddings, r.boolean("tie_word_embeddings", false));
  if (!need_attention) return Ok{};
  GANTRY_READ(c.heads, r.positive("num_attention_heads"));
  GANTRY_READ(c.kv_heads, r.integer("num_key_value_heads", c.heads));
  const char* head_dim_key = r.has("attention_head_dim") ? "attention_head_dim" : "head_dim";
  if (r.has(head_dim_key)) {
    GANTRY_READ(c.head_dim, r.integer(head_dim_key, 0));
  } else {
    if (c.hidden % c.heads != 0)
      return r.error("hidden_size (" + std::to_string(c.hidden) + ") is not a multiple of num_attention_heads (" +
                     std::to_string(c.heads) + ") and there is no head_dim");
    c.head_dim = c.hidden / c.heads;
  }
  return Ok{};
}

Result<ModelConfig> read_llama(const FieldReader& r, ModelConfig c, bool moe) {
  if (auto s = read_common(r, c, true); !s) return s.error();
  std::int64_t layers = 0;
  GANTRY_READ(layers, read_layer_count(r));
  GANTRY_READ(c.ffn, r.positive("intermediate_size"));
  if (moe) {
    GANTRY_READ(c.experts, r.positive("num_local_experts"));
    GANTRY_READ(c.experts_per_token, r.positive("num_experts_per_tok"));
    c.moe_ffn = c.ffn;
  }
  c.body = llama_layout(as_int(layers), moe);
  return c;
}

Result<ModelConfig> read_jamba(const FieldReader& r, ModelConfig c) {
  if (auto s = read_common(r, c, true); !s) return s.error();
  std::int64_t layers = 0, attn_period = 0, attn_offset = 0, expert_period = 0, expert_offset = 0, expand = 0;
  GANTRY_READ(layers, read_layer_count(r));
  GANTRY_READ(c.ffn, r.positive("intermediate_size"));
  GANTRY_READ(attn_period, r.positive("attn_layer_period"));
  GANTRY_READ(attn_offset, r.integer("attn_layer_offset"));
  GANTRY_READ(expert_period, r.positive("expert_layer_period"));
  GANTRY_READ(expert_offset, r.integer("expert_layer_offset"));
  if (attn_offset >= attn_period || expert_offset >= expert_period)
    return r.error("attn_layer_offset and expert_layer_offset must be smaller than their periods (got " +
                   std::to_string(attn_offset) + "/" + std::to_string(attn_period) + " and " +
                   std::to_string(expert_offset) + "/" + std::to_string(expert_period) + ")");
  GANTRY_READ(c.experts, r.positive("num_experts"));
  GANTRY_READ(c.experts_per_token, r.positive("num_experts_per_tok"));
  c.moe_ffn = c.ffn;
  GANTRY_READ(c.mamba_state, r.positive("mamba_d_state"));
  GANTRY_READ(c.mamba_conv, r.positive("mamba_d_conv"));
  GANTRY_READ(expand, r.positive("mamba_expand"));
  c.mamba_inner = expand * c.hidden;
  // mamba_dt_rank: an integer or "auto" (transformers: ceil(hidden_size / 16)).
  const std::int64_t auto_rank = (c.hidden + 15) / 16;
  if (r.has("mamba_dt_rank") && r.string("mamba_dt_rank").ok()) {
    if (r.string("mamba_dt_rank").value() != "auto")
      return r.error("field \"mamba_dt_rank\" must be an integer or \"auto\"");
    c.mamba_dt_rank = auto_rank;
  } else {
    GANTRY_READ(c.mamba_dt_rank, r.integer("mamba_dt_rank", auto_rank));
  }
  GANTRY_READ(c.mamba_conv_bias, r.boolean("mamba_conv_bias", true));
  c.body = jamba_layout(as_int(layers), as_int(attn_period), as_int(attn_offset), as_int(expert_period),
                        as_int(expert_offset));
  // With one expert, transformers builds a dense MLP where the period says MoE.
  if (c.experts <= 1)
    for (BodyLayer& layer : c.body)
      if (layer.type == LayerType::moe) layer.type = LayerType::mlp;
  return c;
}

Result<ModelConfig> read_nemotron_h(const FieldReader& r, ModelConfig c, const std::string& source) {
  std::string pattern;
  GANTRY_READ(pattern, r.string("hybrid_override_pattern"));
  if (static_cast<std::int64_t>(pattern.size()) > kMaxLayers)
    return r.error("hybrid_override_pattern has " + std::to_string(pattern.size()) + " layers; at most " +
                   std::to_string(kMaxLayers) + " are supported");
  GANTRY_READ(c.body, nemotron_h_layout(pattern, source));
  const std::int64_t length = static_cast<std::int64_t>(pattern.size());
  std::int64_t layers = 0;
  GANTRY_READ(layers, r.integer("num_hidden_layers", length));
  if (layers != length)
    return r.error("num_hidden_layers is " + std::to_string(layers) + " but hybrid_override_pattern has " +
                   std::to_string(length) + " layers");
  auto uses = [&](char symbol) { return pattern.find(symbol) != std::string::npos; };
  if (auto s = read_common(r, c, uses('*')); !s) return s.error();
  c.gated_ffn = false;  // squared ReLU, up/down only
  c.gated_experts = false;
  if (uses('-')) GANTRY_READ(c.ffn, r.positive("intermediate_size"));
  if (uses('M')) {
    std::int64_t head_dim = 0;
    GANTRY_READ(c.mamba_heads, r.positive("mamba_num_heads"));
    GANTRY_READ(head_dim, r.positive("mamba_head_dim"));
    c.mamba_inner = c.mamba_heads * head_dim;
    GANTRY_READ(c.mamba_state, r.positive("ssm_state_size"));
    GANTRY_READ(c.mamba_groups, r.positive("n_groups"));
    GANTRY_READ(c.mamba_conv, r.positive("conv_kernel"));
    GANTRY_READ(c.mamba_conv_bias, r.boolean("use_conv_bias", true));
  }
  if (uses('E')) {
    GANTRY_READ(c.experts, r.positive(r.has("num_experts") ? "num_experts" : "n_routed_experts"));
    GANTRY_READ(c.experts_per_token, r.positive("num_experts_per_tok"));
    GANTRY_READ(c.moe_ffn, r.positive("moe_intermediate_size"));
    GANTRY_READ(c.shared_expert_ffn, r.integer("moe_shared_expert_intermediate_size", 0, 0));
  }
  return c;
}

#undef GANTRY_READ

struct Architecture {
  const char* class_name;
  const char* model_type;
  ModelFamily family;
};
constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", "llama", ModelFamily::llama},
    {"MixtralForCausalLM", "mixtral", ModelFamily::mixtral},
    {"JambaForCausalLM", "jamba", ModelFamily::jamba},
    {"NemotronHForCausalLM", "nemotron_h", ModelFamily::nemotron_h},
};

const Architecture* find_architecture(const json& config) {
  auto archs = config.find("architectures");
  if (archs != config.end() && archs->is_array())
    for (const json& a : *archs)
      if (a.is_string())
        for (const Architecture& known : kArchitectures)
          if (a.get<std::string>() == known.class_name) return &known;
  auto type = config.find("model_type");
  if (type != config.end() && type->is_string())
    for (const Architecture& known : kArchitectures)
      if (type->get<std::string>() == known.model_type) return &known;
  return nullptr;
}

}  // namespace

Result<ModelConfig> parse_hf_config(const std::string& json_text, const std::string& source) {
  auto parsed = parse_json(json_text, source);
  if (!parsed.ok()) return parsed.error();
  const json& config = parsed.value();
  if (!config.is_object()) return make_error(source + ": a config.json must be a JSON object");
  const Architecture* arch = find_architecture(config);
  if (!arch) {
    std::string supported;
    for (const Architecture& known : kArchitectures)
      supported += std::string(supported.empty() ? "" : ", ") + known.class_name;
    return make_error(source + ": unsupported model (\"architectures\" " +
                      (config.contains("architectures") ? config["architectures"].dump() : "missing") +
                      ", \"model_type\" " + (config.contains("model_type") ? config["model_type"].dump() : "missing") +
                      "); supported: " + supported);
  }
  const FieldReader reader(config, source, arch->class_name);
  ModelConfig c;
  c.name = source;
  c.family = arch->family;
  Result<ModelConfig> result = make_error("");
  switch (arch->family) {
    case ModelFamily::llama: result = read_llama(reader, std::move(c), false); break;
    case ModelFamily::mixtral: result = read_llama(reader, std::move(c), true); break;
    case ModelFamily::jamba: result = read_jamba(reader, std::move(c)); break;
    case ModelFamily::nemotron_h: result = read_nemotron_h(reader, std::move(c), source); break;
  }
  if (!result.ok()) return result;
  if (auto ok = check_model_config(result.value(), source); !ok) return ok.error();
  return result;
}

Result<std::vector<LayerCost>> model_layers_from_hf_config(const std::string& json_text,
                                                           const std::string& source,
                                                           const ModelShape& shape) {
  auto config = parse_hf_config(json_text, source);
  if (!config.ok()) return config.error();
  return layer_costs(config.value(), shape);
}

}  // namespace gantry
