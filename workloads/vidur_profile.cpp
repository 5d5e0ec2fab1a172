#include "workloads/vidur_profile.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

namespace gantry {

namespace {

const char* const kOps[] = {"emb",  "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
                            "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"};

// A CSV line's fields (a line ending in CR LF, as from Windows, loses its CR).
std::vector<std::string> split(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) out.push_back(field);
  return out;
}

double seconds(const MeasuredOps& p, const char* op) { return p.forward_seconds.at(op); }

}  // namespace

Result<MeasuredOps> read_vidur_profile(const std::string& path, std::int64_t tokens) {
  std::ifstream in(path);
  if (!in) return make_error(path + ": cannot open file for reading");
  std::stringstream text;
  text << in.rdbuf();
  return parse_vidur_profile(text.str(), path, tokens);
}

Result<MeasuredOps> parse_vidur_profile(const std::string& text, const std::string& path, std::int64_t tokens) {
  std::istringstream file(text);
  std::string line;
  if (!std::getline(file, line)) return make_error(path + ": empty file");
  const std::vector<std::string> header = split(line);
  auto column = [&](const std::string& name) -> int {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  };
  std::vector<std::pair<std::string, int>> wanted;
  for (const char* op : kOps) wanted.emplace_back(std::string("time_stats.") + op + ".median", 0);
  for (const char* name : {"num_tokens", "num_tensor_parallel_workers", "n_embd", "n_expanded_embd", "n_head", "n_kv_head"})
    wanted.emplace_back(name, 0);
  for (auto& [name, index] : wanted) {
    index = column(name);
    if (index < 0) return make_error(path + ": no column '" + name + "' (expected a vidur profiling mlp.csv)");
  }
  // Rows without tensor parallelism, by token count; repeated measurements of one count average.
  std::map<double, std::vector<double>> rows;
  std::map<double, int> repeats;
  int line_no = 1;
  while (std::getline(file, line)) {
    ++line_no;
    const std::vector<std::string> fields = split(line);
    std::vector<double> values;
    for (const auto& [name, index] : wanted) {
      if (index >= static_cast<int>(fields.size()))
        return make_error(path + ":" + std::to_string(line_no) + ": missing field '" + name + "'");
      char* end = nullptr;
      const double v = std::strtod(fields[index].c_str(), &end);
      if (end == fields[index].c_str() || !std::isfinite(v))
        return make_error(path + ":" + std::to_string(line_no) + ": '" + name + "' is not a number");
      if (v < 0)  // a time or a size: a negative one reached the stage costs' checks, which named neither
        return make_error(path + ":" + std::to_string(line_no) + ": '" + name + "' is negative (" + fields[index] + ")");
      values.push_back(v);
    }
    const std::size_t tp = std::size(kOps) + 1, count = std::size(kOps);
    if (values[tp] != 1) continue;
    const int seen = repeats[values[count]]++;
    std::vector<double>& row = rows[values[count]];
    if (seen == 0) {
      row = values;
    } else {
      for (std::size_t i = 0; i < count; ++i) row[i] += (values[i] - row[i]) / (seen + 1);
    }
  }
  if (rows.empty()) return make_error(path + ": no rows without tensor parallelism (num_tensor_parallel_workers = 1)");
  const double t = static_cast<double>(tokens);
  auto upper = rows.lower_bound(t);
  if (upper == rows.end())
    return make_error(path + ": " + std::to_string(tokens) + " tokens is beyond the profiled range (up to " +
                      std::to_string(static_cast<long long>(rows.rbegin()->first)) + ")");
  auto lower = upper == rows.begin() || upper->first == t ? upper : std::prev(upper);
  const double span = upper->first - lower->first;
  const double w = span > 0 ? (t - lower->first) / span : 0;
  MeasuredOps out;
  for (std::size_t i = 0; i < std::size(kOps); ++i)
    out.forward_seconds[kOps[i]] = 1e-3 * ((1 - w) * lower->second[i] + w * upper->second[i]);
  const std::vector<double>& dims = upper->second;
  const std::size_t base = std::size(kOps) + 2;
  out.hidden = static_cast<std::int64_t>(dims[base]);
  out.ffn = static_cast<std::int64_t>(dims[base + 1]);
  out.heads = static_cast<std::int64_t>(dims[base + 2]);
  out.kv_heads = static_cast<std::int64_t>(dims[base + 3]);
  return out;
}

Result<std::vector<std::array<double, 3>>> measured_layer_times(const std::vector<LayerCost>& layers,
                                                                const MeasuredOps& p, std::int64_t tokens,
                                                                const Device& device,
                                                                const PipelineModelOptions& options) {
  const double t = static_cast<double>(tokens), h = static_cast<double>(p.hidden);
  const double head_dim = h / static_cast<double>(p.heads);
  // Per-token forward FLOPs of the profiled linear parts (gated MLP; q, k, v and o projections).
  const double mlp_flops = 6 * h * static_cast<double>(p.ffn);
  const double attention_linear = 2 * h * (h + 2 * static_cast<double>(p.kv_heads) * head_dim) + 2 * h * h;
  auto roofline = [&](const LayerCost& l, double flops) {
    return flops / (device.peak_flops * options.efficiency[static_cast<int>(l.type)]);
  };
  std::vector<std::array<double, 3>> out;
  for (const LayerCost& l : layers) {
    switch (l.type) {
      case LayerType::mlp: {
        if (std::abs(l.forward_flops / t - mlp_flops) > 0.01 * mlp_flops)
          return make_error("profile: layer " + l.name + " is not the profiled MLP (hidden " + std::to_string(p.hidden) +
                            ", MLP " + std::to_string(p.ffn) + "): its FLOPs differ by more than 1%");
        const double f = seconds(p, "post_attention_layernorm") + seconds(p, "mlp_up_proj") + seconds(p, "mlp_act") +
                         seconds(p, "mlp_down_proj") + seconds(p, "add");
        out.push_back({f, f, seconds(p, "mlp_up_proj") + seconds(p, "mlp_down_proj")});
        break;
      }
      case LayerType::attention: {
        const double core_flops = l.forward_flops - t * attention_linear;
        if (core_flops < 0)
          return make_error("profile: layer " + l.name + " is smaller than the profiled attention (hidden " +
                            std::to_string(p.hidden) + ")");
        const double linear = seconds(p, "input_layernorm") + seconds(p, "attn_pre_proj") + seconds(p, "attn_rope") +
                              seconds(p, "attn_post_proj") + seconds(p, "add");
        const double core = roofline(l, core_flops);  // not in the profile
        out.push_back({linear + core, linear + 2 * core, seconds(p, "attn_pre_proj") + seconds(p, "attn_post_proj")});
        break;
      }
      case LayerType::embedding:
        out.push_back({seconds(p, "emb"), 0, seconds(p, "emb")});
        break;
      default:
        out.push_back({roofline(l, l.forward_flops), roofline(l, l.input_grad_flops), roofline(l, l.weight_grad_flops)});
    }
  }
  return out;
}

}  // namespace gantry
