#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "workloads/vidur_profile.hpp"

using namespace gantry;

namespace {

const std::string kProfile = std::string(GANTRY_TEST_DATA) + "/vidur/h100/Llama-2-7b-hf/mlp.csv";

// Llama-2-7B: the model the shipped profile measured.
const char* const kLlama2 = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
  "intermediate_size": 11008, "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 32,
  "vocab_size": 32000, "rms_norm_eps": 1e-05, "tie_word_embeddings": false})";

}  // namespace

TEST_CASE("vidur profiles give measured times at a token count", "[workloads]") {
  auto p = read_vidur_profile(kProfile, 4096);
  REQUIRE(p.ok());
  CHECK(p.value().hidden == 4096);
  CHECK(p.value().ffn == 11008);
  // Two rows measured 4096 tokens (medians 0.987 and 0.999 ms): they average.
  CHECK(p.value().forward_seconds.at("mlp_up_proj") == Approx(0.993e-3));
  auto between = read_vidur_profile(kProfile, 4080);  // halfway between the 4064 row (1.001 ms) and 4096
  REQUIRE(between.ok());
  CHECK(between.value().forward_seconds.at("mlp_up_proj") == Approx(0.997e-3));
  CHECK_FALSE(read_vidur_profile(kProfile, 1 << 20).ok());
  auto missing = read_vidur_profile("no-such.csv", 4096);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("no-such.csv"));
}

TEST_CASE("a vidur profile with CR LF line ends reads as with LF; a negative time is refused by name", "[workloads]") {
  std::ifstream in(kProfile);
  std::stringstream text;
  text << in.rdbuf();
  std::string crlf;
  for (char c : text.str()) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  auto windows = parse_vidur_profile(crlf, "crlf.csv", 4096);  // before: "no column 'num_tensor_parallel_workers'"
  REQUIRE(windows.ok());
  const MeasuredOps unix = parse_vidur_profile(text.str(), "lf.csv", 4096).value();
  CHECK(windows.value().forward_seconds == unix.forward_seconds);
  CHECK(windows.value().hidden == unix.hidden);
  // The first data row's mlp_up_proj median made negative.
  std::string negative = text.str();
  const std::string header = negative.substr(0, negative.find('\n'));
  int column = 0;
  for (std::size_t at = 0; at < header.find("time_stats.mlp_up_proj.median"); ++at) column += header[at] == ',';
  std::size_t at = negative.find('\n') + 1;
  for (int k = 0; k < column; ++k) at = negative.find(',', at) + 1;
  negative.insert(at, "-");
  auto refused = parse_vidur_profile(negative, "neg.csv", 4096);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::StartsWith("neg.csv:2: 'time_stats.mlp_up_proj.median' is negative (-"));
}

TEST_CASE("measured layer times replace the FLOP-based ones for Llama layers", "[workloads]") {
  auto layers = model_layers_from_hf_config(kLlama2, "llama-2-7b.json");
  REQUIRE(layers.ok());
  auto profile = read_vidur_profile(kProfile, 4096);
  REQUIRE(profile.ok());
  Cluster cluster = Cluster::load("8xH100-nvswitch").value();
  auto times = measured_layer_times(layers.value(), profile.value(), 4096, cluster.device(0));
  REQUIRE(times.ok());
  const auto& p = profile.value().forward_seconds;
  for (std::size_t i = 0; i < layers.value().size(); ++i) {
    const LayerCost& l = layers.value()[i];
    if (l.type == LayerType::mlp) {
      CHECK(times.value()[i][0] == Approx(p.at("post_attention_layernorm") + p.at("mlp_up_proj") + p.at("mlp_act") +
                                          p.at("mlp_down_proj") + p.at("add")));
      CHECK(times.value()[i][2] == Approx(p.at("mlp_up_proj") + p.at("mlp_down_proj")));
    }
    if (l.type == LayerType::attention) {
      // F = linear parts + core, B = linear parts + 2 x core (the core's backward is twice its
      // forward), W = the two projections: B - F is the core, F - linear is the core.
      const double linear = p.at("input_layernorm") + p.at("attn_pre_proj") + p.at("attn_rope") +
                            p.at("attn_post_proj") + p.at("add");
      CHECK(times.value()[i][0] > linear);
      CHECK(times.value()[i][1] - times.value()[i][0] == Approx(times.value()[i][0] - linear));
      CHECK(times.value()[i][2] == Approx(p.at("attn_pre_proj") + p.at("attn_post_proj")));
    }
  }
  // A model with other sizes does not match the profile.
  auto llama3 = model_layers("llama-3-8b");
  REQUIRE(llama3.ok());
  auto mismatch = measured_layer_times(llama3.value(), profile.value(), 4096, cluster.device(0));
  REQUIRE_FALSE(mismatch.ok());
  CHECK_THAT(mismatch.error().message, Catch::Contains("profiled"));  // GQA attention and a larger MLP
}
