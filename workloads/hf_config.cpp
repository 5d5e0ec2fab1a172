// Hugging Face config.json -> ModelConfig. Field names and defaults follow transformers'
// LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config, MixtralConfig, Qwen2MoeConfig,
// Qwen3MoeConfig, JambaConfig, NemotronHConfig, MambaConfig, FalconMambaConfig, Mamba2Config and
// BambaConfig. Fields that fix a weight shape or the layer layout are required; the ones real
// configs often leave out get transformers' defaults: num_key_value_heads (= num_attention_heads),
// head_dim (= hidden_size / num_attention_heads), tie_word_embeddings (false; true for Mamba),
// dt ranks and head dims "auto" (ceil(hidden/16); inner / heads), conv biases (true). Optional
// linear-layer biases (attention_bias, mlp_bias, mamba_proj_bias, use_bias) are ignored: the models
// we know have them off; Qwen2's q/k/v biases, which are always there, are counted.
#include <algorithm>
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
  // A list of non-negative integers (e.g. layer indices); empty when absent.
  Result<std::vector<int>> integers(const char* key) const {
    std::vector<int> out;
    if (!has(key)) return out;
    const json& v = config_.at(key);
    if (!v.is_array()) return bad(key, "a list of layer indices", v);
    for (const json& x : v) {
      if (!x.is_number_integer() || x.get<std::int64_t>() < 0 || x.get<std::int64_t>() > kMaxIndex)
        return bad(key, "a list of layer indices", v);
      out.push_back(static_cast<int>(x.get<std::int64_t>()));
    }
    return out;
  }
  // An integer, or "auto" for `automatic` (transformers' convention for dt ranks and head dims);
  // `absent` when the field is not there.
  Result<std::int64_t> integer_or_auto(const char* key, std::int64_t automatic, std::int64_t absent) const {
    if (has(key) && config_.at(key).is_string()) {
      if (config_.at(key).get<std::string>() != "auto") return bad(key, "an integer or \"auto\"", config_.at(key));
      return automatic;
    }
    return integer(key, absent);
  }
  Result<std::string> string(const char* key) const {
    if (!has(key)) return missing(key);
    const json& v = config_.at(key);
    if (!v.is_string()) return bad(key, "a string", v);
    return v.get<std::string>();
  }
  Error error(const std::string& what) const { return make_error(source_ + ": " + what); }

 private:
  static constexpr std::int64_t kMaxIndex = 100000;
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

// transformers' "auto" dt rank of a Mamba-1 mixer: ceil(hidden_size / 16).
std::int64_t auto_dt_rank(std::int64_t hidden) { return (hidden + 15) / 16; }

// A layer list is built in memory: refuse absurd depths instead of exhausting it.
constexpr std::int64_t kMaxLayers = 100000;

Result<std::int64_t> read_layer_count(const FieldReader& r) {
  auto layers = r.positive("num_hidden_layers");
  if (layers.ok() && layers.value() > kMaxLayers)
    return r.error("num_hidden_layers is " + std::to_string(layers.value()) + "; at most " +
                   std::to_string(kMaxLayers) + " are supported");
  return layers;
}

// Where an architecture's config class departs from the usual attention defaults (0: none).
struct AttentionDefaults {
  std::int64_t head_dim = 0;  // else hidden_size / num_attention_heads
  std::int64_t kv_heads = 0;  // else num_attention_heads
};

// The fields every family shares: sizes, vocab, attention shape, tying.
Status read_common(const FieldReader& r, ModelConfig& c, bool need_attention, AttentionDefaults defaults = {}) {
  GANTRY_READ(c.hidden, r.positive("hidden_size"));
  GANTRY_READ(c.vocab, r.positive("vocab_size"));
  GANTRY_READ(c.tie_embeddings, r.boolean("tie_word_embeddings", false));
  if (!need_attention) return Ok{};
  GANTRY_READ(c.heads, r.positive("num_attention_heads"));
  GANTRY_READ(c.kv_heads, r.integer("num_key_value_heads", defaults.kv_heads > 0 ? defaults.kv_heads : c.heads));
  const char* head_dim_key = r.has("attention_head_dim") ? "attention_head_dim" : "head_dim";
  if (r.has(head_dim_key)) {
    GANTRY_READ(c.head_dim, r.integer(head_dim_key, 0));
  } else if (defaults.head_dim > 0) {
    c.head_dim = defaults.head_dim;
  } else {
    if (c.hidden % c.heads != 0)
      return r.error("hidden_size (" + std::to_string(c.hidden) + ") is not a multiple of num_attention_heads (" +
                     std::to_string(c.heads) + ") and there is no head_dim");
    c.head_dim = c.hidden / c.heads;
  }
  return Ok{};
}

Result<ModelConfig> read_llama(const FieldReader& r, ModelConfig c, bool moe, AttentionDefaults defaults) {
  if (auto s = read_common(r, c, true, defaults); !s) return s.error();
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

Result<ModelConfig> read_jamba(const FieldReader& r, ModelConfig c, AttentionDefaults defaults) {
  if (auto s = read_common(r, c, true, defaults); !s) return s.error();
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
  GANTRY_READ(c.mamba_dt_rank, r.integer_or_auto("mamba_dt_rank", auto_dt_rank(c.hidden), auto_dt_rank(c.hidden)));
  GANTRY_READ(c.mamba_conv_bias, r.boolean("mamba_conv_bias", true));
  c.mamba_dt_bc_norms = true;
  c.body = jamba_layout(as_int(layers), as_int(attn_period), as_int(attn_offset), as_int(expert_period),
                        as_int(expert_offset));
  // With one expert, transformers builds a dense MLP where the period says MoE.
  if (c.experts <= 1)
    for (BodyLayer& layer : c.body)
      if (layer.type == LayerType::moe) layer.type = LayerType::mlp;
  return c;
}

// Qwen2-MoE / Qwen3-MoE: sparse layers every decoder_sparse_step (default 1) but mlp_only_layers;
// none without experts. Qwen2-MoE adds a gated shared expert.
Result<ModelConfig> read_qwen_moe(const FieldReader& r, ModelConfig c, AttentionDefaults defaults) {
  if (auto s = read_common(r, c, true, defaults); !s) return s.error();
  std::int64_t layers = 0, step = 0;
  std::vector<int> dense;
  GANTRY_READ(layers, read_layer_count(r));
  GANTRY_READ(step, r.integer("decoder_sparse_step", 1));
  GANTRY_READ(dense, r.integers("mlp_only_layers"));
  GANTRY_READ(c.experts, r.integer("num_experts"));  // 0: every layer dense
  // No expert: every layer dense (a step past the last layer; larger steps mean the same).
  step = c.experts == 0 ? layers + 1 : std::min(step, layers + 1);
  c.body = qwen_moe_layout(as_int(layers), as_int(step), dense);
  const bool any_dense = std::any_of(c.body.begin(), c.body.end(), [](const BodyLayer& b) { return b.type == LayerType::mlp; });
  if (any_dense) GANTRY_READ(c.ffn, r.positive("intermediate_size"));
  if (c.experts > 0) {
    GANTRY_READ(c.experts_per_token, r.positive("num_experts_per_tok"));
    GANTRY_READ(c.moe_ffn, r.positive("moe_intermediate_size"));
    GANTRY_READ(c.shared_expert_ffn, r.integer("shared_expert_intermediate_size", 0, 0));
    c.shared_expert_gate = c.shared_expert_ffn > 0;
  }
  return c;
}

// Mamba / Falcon-Mamba: Mamba-1 mixers only; inner = expand x hidden.
Result<ModelConfig> read_mamba(const FieldReader& r, ModelConfig c) {
  if (auto s = read_common(r, c, false); !s) return s.error();
  GANTRY_READ(c.tie_embeddings, r.boolean("tie_word_embeddings", true));  // MambaConfig ties by default
  std::int64_t layers = 0, expand = 0;
  GANTRY_READ(layers, read_layer_count(r));
  GANTRY_READ(c.mamba_state, r.integer("state_size", 16));
  GANTRY_READ(c.mamba_conv, r.integer("conv_kernel", 4));
  GANTRY_READ(expand, r.integer("expand", 2));
  GANTRY_READ(c.mamba_inner, r.integer("intermediate_size", expand * c.hidden));  // configs store expand x hidden
  GANTRY_READ(c.mamba_dt_rank, r.integer_or_auto("time_step_rank", auto_dt_rank(c.hidden), auto_dt_rank(c.hidden)));
  GANTRY_READ(c.mamba_conv_bias, r.boolean("use_conv_bias", true));
  c.body = mamba_layout(as_int(layers), LayerType::mamba1);
  return c;
}

// Where one architecture keeps a Mamba-2 mixer's numbers, and transformers' defaults for them.
struct Mamba2Fields {
  const char *expand, *heads, *head_dim, *state, *groups, *conv, *conv_bias;
  std::int64_t default_heads, default_head_dim, default_state, default_groups;  // head dim 0: "auto"
};

// inner = expand x hidden in `heads` heads of head_dim ("auto": inner / heads), which must tile it
// exactly (transformers reshapes inner into heads x head_dim).
Status read_mamba2_mixer(const FieldReader& r, ModelConfig& c, const Mamba2Fields& f) {
  std::int64_t expand = 0, head_dim = 0;
  GANTRY_READ(expand, r.integer(f.expand, 2));
  c.mamba_inner = expand * c.hidden;
  GANTRY_READ(c.mamba_heads, r.integer(f.heads, f.default_heads));
  const std::int64_t auto_head_dim = c.mamba_inner / c.mamba_heads;
  GANTRY_READ(head_dim, r.integer_or_auto(f.head_dim, auto_head_dim, f.default_head_dim > 0 ? f.default_head_dim : auto_head_dim));
  if (c.mamba_heads * head_dim != c.mamba_inner)
    return r.error(std::string(f.heads) + " x " + f.head_dim + " (" + std::to_string(c.mamba_heads * head_dim) + ") is not " +
                   f.expand + " x hidden_size (" + std::to_string(c.mamba_inner) + ")");
  GANTRY_READ(c.mamba_state, r.integer(f.state, f.default_state));
  GANTRY_READ(c.mamba_groups, r.integer(f.groups, f.default_groups));
  GANTRY_READ(c.mamba_conv, r.integer(f.conv, 4));
  GANTRY_READ(c.mamba_conv_bias, r.boolean(f.conv_bias, true));
  return Ok{};
}

// Mamba-2: SSD mixers only.
Result<ModelConfig> read_mamba2(const FieldReader& r, ModelConfig c) {
  if (auto s = read_common(r, c, false); !s) return s.error();
  std::int64_t layers = 0;
  GANTRY_READ(layers, read_layer_count(r));
  const Mamba2Fields fields{"expand", "num_heads", "head_dim", "state_size", "n_groups", "conv_kernel", "use_conv_bias", 128, 64, 128, 8};
  if (auto s = read_mamba2_mixer(r, c, fields); !s) return s.error();
  c.body = mamba_layout(as_int(layers), LayerType::mamba2);
  return c;
}

// Bamba: per layer a Mamba-2 mixer (attention at attn_layer_indices) and a SwiGLU MLP.
Result<ModelConfig> read_bamba(const FieldReader& r, ModelConfig c, AttentionDefaults defaults) {
  if (auto s = read_common(r, c, true, defaults); !s) return s.error();
  std::int64_t layers = 0;
  std::vector<int> attention;
  GANTRY_READ(layers, read_layer_count(r));
  GANTRY_READ(attention, r.integers("attn_layer_indices"));
  GANTRY_READ(c.ffn, r.positive("intermediate_size"));
  const Mamba2Fields fields{"mamba_expand", "mamba_n_heads", "mamba_d_head", "mamba_d_state", "mamba_n_groups",
                            "mamba_d_conv", "mamba_conv_bias", 128, 0, 256, 1};
  if (auto s = read_mamba2_mixer(r, c, fields); !s) return s.error();
  c.body = bamba_layout(as_int(layers), attention);
  return c;
}

Result<ModelConfig> read_nemotron_h(const FieldReader& r, ModelConfig c, AttentionDefaults defaults,
                                        const std::string& source) {
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
  if (auto s = read_common(r, c, uses('*'), defaults); !s) return s.error();
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
  bool qkv_bias = false;  // always-on q, k, v biases (Qwen2's)
  bool qk_norm = false;   // q and k RMSNorms (Qwen3's)
  AttentionDefaults attention{};  // its config class's attention defaults, where they differ
};
constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", "llama", ModelFamily::llama},
    {"MistralForCausalLM", "mistral", ModelFamily::llama},
    {"Qwen2ForCausalLM", "qwen2", ModelFamily::llama, true, false},
    {"Qwen3ForCausalLM", "qwen3", ModelFamily::llama, false, true, {128, 0}},  // Qwen3Config: head_dim 128
    {"MixtralForCausalLM", "mixtral", ModelFamily::mixtral},
    {"Qwen2MoeForCausalLM", "qwen2_moe", ModelFamily::qwen_moe, true, false},
    {"Qwen3MoeForCausalLM", "qwen3_moe", ModelFamily::qwen_moe, false, true},  // no head_dim default: h / heads
    {"JambaForCausalLM", "jamba", ModelFamily::jamba},
    {"NemotronHForCausalLM", "nemotron_h", ModelFamily::nemotron_h},
    {"MambaForCausalLM", "mamba", ModelFamily::mamba},
    {"FalconMambaForCausalLM", "falcon_mamba", ModelFamily::mamba},
    {"Mamba2ForCausalLM", "mamba2", ModelFamily::mamba2},
    {"BambaForCausalLM", "bamba", ModelFamily::bamba, false, false, {0, 8}},  // BambaConfig: 8 kv heads
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
  c.qkv_bias = arch->qkv_bias;
  c.qk_norm = arch->qk_norm;
  Result<ModelConfig> result = make_error("");
  switch (arch->family) {
    case ModelFamily::llama: result = read_llama(reader, std::move(c), false, arch->attention); break;
    case ModelFamily::mixtral: result = read_llama(reader, std::move(c), true, arch->attention); break;
    case ModelFamily::jamba: result = read_jamba(reader, std::move(c), arch->attention); break;
    case ModelFamily::nemotron_h: result = read_nemotron_h(reader, std::move(c), arch->attention, source); break;
    case ModelFamily::qwen_moe: result = read_qwen_moe(reader, std::move(c), arch->attention); break;
    case ModelFamily::mamba: result = read_mamba(reader, std::move(c)); break;
    case ModelFamily::mamba2: result = read_mamba2(reader, std::move(c)); break;
    case ModelFamily::bamba: result = read_bamba(reader, std::move(c), arch->attention); break;
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
