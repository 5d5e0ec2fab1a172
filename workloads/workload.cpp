#include "workloads/workload.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "workloads/doppler_costs.hpp"
#include "workloads/generators.hpp"

namespace gantry {

namespace {

using Maker = Result<Graph> (*)(const WorkloadParams&);

struct Entry {
  WorkloadInfo info;
  Maker make;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {chainmm_info(), make_chainmm},       {ffnn_info(), make_ffnn},
      {llama_block_info(), make_llama_block}, {llama_layer_info(), make_llama_layer},
      {random_dag_info(), make_random_dag},   {stg_random_info(), make_stg_random},
      {op_grid_info(), make_op_grid},         {link_ladder_info(), make_link_ladder},
  };
  return entries;
}

std::string normalize_name(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Strict: the whole text must be a finite number ("8192", "1e10", "0.5").
bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
}

const Entry* find_entry(const std::string& name) {
  const std::string wanted = normalize_name(name);
  for (const auto& entry : registry())
    if (entry.info.name == wanted) return &entry;
  return nullptr;
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.info.name);
  return names;
}

Status check_keys(const WorkloadInfo& info, const WorkloadParams& params) {
  const std::vector<std::string> keys = workload_param_keys(info);
  for (const auto& [key, value] : params.values)
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      return make_error("workload " + info.name + ": unknown parameter '" + key +
                        "'; valid parameters: " + join(keys));
  return Ok{};
}

}  // namespace

double WorkloadParams::get(const std::string& key, double fallback) const {
  auto it = values.find(key);
  return it == values.end() ? fallback : it->second;
}

Result<std::int64_t> WorkloadParams::get_int(const std::string& key, std::int64_t fallback,
                                             std::int64_t min, std::int64_t max) const {
  const double value = get(key, static_cast<double>(fallback));
  if (!std::isfinite(value) || value != std::floor(value) || value < static_cast<double>(min) ||
      value > static_cast<double>(max))
    return make_error(workload + ": parameter " + key + " must be an integer in [" +
                      std::to_string(min) + ", " + std::to_string(max) + "] (got " +
                      format_number(value) + ")");
  return static_cast<std::int64_t>(value);
}

Result<double> WorkloadParams::get_real(const std::string& key, double fallback, double min,
                                        double max) const {
  const double value = get(key, fallback);
  if (!std::isfinite(value) || value < min || value > max)
    return make_error(workload + ": parameter " + key + " must be a number in [" + format_number(min) +
                      ", " + format_number(max) + "] (got " + format_number(value) + ")");
  return value;
}

const std::vector<WorkloadInfo>& workload_list() {
  static const std::vector<WorkloadInfo> infos = [] {
    std::vector<WorkloadInfo> out;
    for (const auto& entry : registry()) out.push_back(entry.info);
    return out;
  }();
  return infos;
}

const WorkloadInfo* find_workload(const std::string& name) {
  const Entry* entry = find_entry(name);
  return entry ? &entry->info : nullptr;
}

std::vector<std::string> workload_param_keys(const WorkloadInfo& info) {
  std::vector<std::string> keys;
  std::istringstream in(info.params_help);
  std::string item;
  while (in >> item) keys.push_back(item.substr(0, item.find('=')));
  return keys;
}

Result<WorkloadSpec> parse_workload_spec(const std::string& spec) {
  WorkloadSpec out;
  const auto colon = spec.find(':');
  out.name = normalize_name(trim(spec.substr(0, colon)));
  if (out.name.empty())
    return make_error("workload spec '" + spec + "': missing workload name (valid: " +
                      join(workload_names()) + ")");
  out.params.workload = out.name;
  if (colon == std::string::npos) return out;

  std::istringstream in(spec.substr(colon + 1));
  std::string item;
  while (std::getline(in, item, ',')) {
    item = trim(item);
    if (item.empty()) continue;  // tolerate "name:" and trailing commas
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      return make_error("workload spec '" + spec + "': expected key=value, got '" + item + "'");
    const std::string key = trim(item.substr(0, eq));
    const std::string text = trim(item.substr(eq + 1));
    double value = 0;
    if (key.empty())
      return make_error("workload spec '" + spec + "': missing parameter name in '" + item + "'");
    if (key == "costs") {
      if (text != "physical" && text != "doppler")
        return make_error("workload spec '" + spec + "': costs=" + text +
                          ": expected physical (times from flops and bytes) or doppler (multiply-adds, comm = 4 x compute)");
      out.costs = text;
      continue;
    }
    if (!parse_number(text, value))
      return make_error("workload spec '" + spec + "': parameter " + key + " needs a number, got '" +
                        text + "'");
    if (!out.params.values.emplace(key, value).second)
      return make_error("workload spec '" + spec + "': parameter " + key + " is given twice");
  }
  return out;
}

Result<Graph> make_workload(const std::string& spec, std::uint64_t seed) {
  auto parsed = parse_workload_spec(spec);
  if (!parsed) return parsed.error();
  WorkloadSpec& request = parsed.value();
  const Entry* entry = find_entry(request.name);
  if (!entry)
    return make_error("unknown workload '" + request.name + "'; valid workloads: " +
                      join(workload_names()));
  auto keys_ok = check_keys(entry->info, request.params);
  if (!keys_ok) return keys_ok.error();
  const auto keys = workload_param_keys(entry->info);
  if (!request.params.has("seed") && std::find(keys.begin(), keys.end(), "seed") != keys.end()) {
    // Parameters are doubles; keep the seed in their exact integer range.
    const std::uint64_t exact = seed & ((std::uint64_t{1} << 53) - 1);
    request.params.values["seed"] = static_cast<double>(exact);
  }
  auto graph = entry->make(request.params);
  if (!graph || request.costs != "doppler") return graph;
  return with_doppler_costs(graph.value());
}

}  // namespace gantry
