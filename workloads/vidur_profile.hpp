#pragma once
// Measured operator times as a profile source for Llama layers: the vidur project's
// profiling/compute/<gpu>/<model>/mlp.csv (per-operator forward times in ms by token count and
// tensor-parallel degree). The linear parts of attention and MLP layers and the embedding take
// their measured times; what the file does not measure (the attention core, the logits) keeps
// the FLOP-based time.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/pipeline_stages.hpp"

namespace gantry {

struct MeasuredOps {
  std::map<std::string, double> forward_seconds;  // "attn_pre_proj" -> median time at the token count
  std::int64_t hidden = 0, ffn = 0, heads = 0, kv_heads = 0;
};

// The median times at `tokens` tokens without tensor parallelism (repeated rows averaged),
// interpolated linearly between the two profiled token counts around it. Errors name the file and
// what is missing.
Result<MeasuredOps> read_vidur_profile(const std::string& path, std::int64_t tokens);
// The same from the file's text; errors name `path`.
Result<MeasuredOps> parse_vidur_profile(const std::string& text, const std::string& path, std::int64_t tokens);

// Per-layer F, B, W seconds with the measured parts (B of a GEMM = its forward, W = the weight
// GEMMs' forward, the attention core's backward = 2x its forward). The model must have the
// profile's hidden and MLP sizes (checked from the layers' FLOPs).
Result<std::vector<std::array<double, 3>>> measured_layer_times(const std::vector<LayerCost>& layers,
                                                                const MeasuredOps& profile, std::int64_t tokens,
                                                                const Device& device,
                                                                const PipelineModelOptions& options = {});

}  // namespace gantry
