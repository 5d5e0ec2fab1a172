#include "core/pipeline_scheme.hpp"

#include <cmath>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "core/json_util.hpp"

namespace gantry {

namespace {

using nlohmann::json;

const char* const kOpNames[] = {"F", "B", "W", "BW"};

// A list field of `count` numbers, or one number repeated.
Result<std::vector<double>> number_list(const json& root, const char* key, int count, const std::string& source,
                                        bool required, double fallback = 0) {
  auto it = root.find(key);
  if (it == root.end()) {
    if (required) return make_error(source + ": missing field '" + key + "'");
    return std::vector<double>(count, fallback);
  }
  if (it->is_number()) return std::vector<double>(count, it->get<double>());
  if (!it->is_array() || static_cast<int>(it->size()) != count)
    return make_error(source + ": '" + key + "' must be a number or a list of " + std::to_string(count) + " numbers");
  std::vector<double> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_number()) return make_error(source + ": " + key + "[" + std::to_string(i) + "] is not a number");
    out.push_back((*it)[i].get<double>());
  }
  return out;
}

}  // namespace

const char* to_string(PipeOp op) { return kOpNames[static_cast<int>(op)]; }

Status PipelineScheme::check() const {
  const int stages = num_stages(), devices = num_devices();
  if (stages == 0) return make_error("pipeline scheme: no stages");
  if (num_microbatches <= 0) return make_error("pipeline scheme: the microbatch count must be at least 1");
  for (int s = 0; s < stages; ++s)
    if (placement[s] < 0 || placement[s] >= devices)
      return make_error("pipeline scheme: stage " + std::to_string(s) + " is placed on device " +
                        std::to_string(placement[s]) + " but the schedule has " + std::to_string(devices) + " devices");
  // count[op][m][s]
  std::vector<int> seen(static_cast<std::size_t>(4) * num_microbatches * stages, 0);
  auto slot = [&](PipeOp op, int m, int s) -> int& {
    return seen[(static_cast<std::size_t>(op) * num_microbatches + m) * stages + s];
  };
  for (int d = 0; d < devices; ++d)
    for (const PipeTask& t : schedule[d]) {
      auto what = [&] {  // only for an error
        return std::string(to_string(t.op)) + "(" + std::to_string(t.microbatch) + "," + std::to_string(t.stage) + ")";
      };
      if (t.microbatch < 0 || t.microbatch >= num_microbatches || t.stage < 0 || t.stage >= stages)
        return make_error("pipeline scheme: device " + std::to_string(d) + " lists " + what() + ", out of range");
      if (placement[t.stage] != d)
        return make_error("pipeline scheme: device " + std::to_string(d) + " lists " + what() + " but stage " +
                          std::to_string(t.stage) + " is on device " + std::to_string(placement[t.stage]));
      if (++slot(t.op, t.microbatch, t.stage) > 1)
        return make_error("pipeline scheme: " + what() + " is scheduled twice");
    }
  for (int m = 0; m < num_microbatches; ++m)
    for (int s = 0; s < stages; ++s) {
      auto where = [&] { return "(" + std::to_string(m) + "," + std::to_string(s) + ")"; };
      if (slot(PipeOp::F, m, s) != 1) return make_error("pipeline scheme: F" + where() + " is never scheduled");
      const bool fused = slot(PipeOp::BW, m, s) == 1;
      const bool split = slot(PipeOp::B, m, s) == 1 && slot(PipeOp::W, m, s) == 1;
      if (fused == split)
        return make_error("pipeline scheme: " + where() + " needs either BW or both B and W, exactly once");
    }
  return Ok{};
}

Status StageCosts::check(const std::string& source) const {
  const std::size_t n = f.size();
  if (n == 0) return make_error(source + ": no stages");
  for (auto [name, list] : {std::pair{"cost_b", &b}, std::pair{"cost_w", &w}, std::pair{"comm", &comm},
                            std::pair{"mem_f", &mem_f}, std::pair{"mem_b", &mem_b}, std::pair{"mem_w", &mem_w},
                            std::pair{"static_memory", &static_memory}, std::pair{"flops", &flops}})
    if (list->size() != n) return make_error(source + ": '" + name + "' has " + std::to_string(list->size()) +
                                             " entries, expected one per stage (" + std::to_string(n) + ")");
  for (std::size_t s = 0; s < n; ++s) {
    for (auto [name, value] : {std::pair{"cost_f", f[s]}, std::pair{"cost_b", b[s]}, std::pair{"cost_w", w[s]},
                               std::pair{"cost_comm", comm[s]}})
      if (!std::isfinite(value) || value < 0)
        return make_error(source + ": " + name + "[" + std::to_string(s) + "] must be a finite number >= 0");
    if (mem_f[s] < 0 || mem_w[s] > 0)
      return make_error(source + ": stage " + std::to_string(s) + ": mem_f must be >= 0 and mem_w <= 0");
    if (mem_f[s] + mem_b[s] + mem_w[s] < -1e-6 * std::max(1.0, mem_f[s]))
      return make_error(source + ": stage " + std::to_string(s) + ": B and W free more than F allocates");
  }
  return Ok{};
}

Result<std::pair<StageCosts, int>> read_stage_costs_json(const std::string& text, const std::string& source) try {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  const json& root = parsed.value();
  if (!root.is_object()) return make_error(source + ": expected a JSON object (zero-bubble GraphConfig fields)");
  auto f = number_list(root, "cost_f", 0, source, false);
  int stages = root.contains("n_stages") ? root["n_stages"].get<int>()
                                          : (root.contains("cost_f") && root["cost_f"].is_array()
                                                 ? static_cast<int>(root["cost_f"].size())
                                                 : 0);
  if (stages <= 0) return make_error(source + ": 'n_stages' (or a 'cost_f' list) must give at least one stage");
  if (!root.contains("n_micro") || !root["n_micro"].is_number_integer() || root["n_micro"].get<int>() <= 0)
    return make_error(source + ": 'n_micro' must be a whole number >= 1");
  StageCosts c;
  std::vector<double>* targets[] = {&c.f, &c.b, &c.w};
  const char* keys[] = {"cost_f", "cost_b", "cost_w"};
  for (int k = 0; k < 3; ++k) {
    auto list = number_list(root, keys[k], stages, source, true);
    if (!list) return list.error();
    *targets[k] = list.value();
  }
  for (auto [key, target, fallback] : {std::tuple{"cost_comm", &c.comm, 0.0}, std::tuple{"mem_f", &c.mem_f, 0.0},
                                       std::tuple{"mem_b", &c.mem_b, 0.0}, std::tuple{"mem_w", &c.mem_w, 0.0},
                                       std::tuple{"static_memory", &c.static_memory, 0.0},
                                       std::tuple{"flops", &c.flops, 0.0}}) {
    auto list = number_list(root, key, stages, source, false, fallback);
    if (!list) return list.error();
    *target = list.value();
  }
  if (root.contains("max_mem")) {
    const int devices = root["max_mem"].is_array() ? static_cast<int>(root["max_mem"].size()) : stages;
    auto list = number_list(root, "max_mem", devices, source, false);
    if (!list) return list.error();
    c.max_mem = list.value();
  }
  auto ok = c.check(source);
  if (!ok) return ok.error();
  return std::pair{c, root["n_micro"].get<int>()};
} catch (const nlohmann::json::exception& e) {
  return make_error(source + ": " + e.what());
}

std::string scheme_to_json(const PipelineScheme& scheme, int indent) {
  json root;
  root["format"] = "gantry-pipeline-scheme";
  root["version"] = 1;
  root["microbatches"] = scheme.num_microbatches;
  json partition = json::array();
  for (auto [first, end] : scheme.partition) partition.push_back({first, end});
  root["partition"] = partition;
  root["placement"] = scheme.placement;
  json schedule = json::array();
  for (const auto& device : scheme.schedule) {
    json list = json::array();
    for (const PipeTask& t : device) list.push_back(std::string(to_string(t.op)) + " " + std::to_string(t.microbatch) + " " + std::to_string(t.stage));
    schedule.push_back(list);
  }
  root["schedule"] = schedule;
  return root.dump(indent);
}

Result<PipelineScheme> scheme_from_json(const std::string& text, const std::string& source) try {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  const json& root = parsed.value();
  PipelineScheme scheme;
  scheme.num_microbatches = root.at("microbatches").get<int>();
  for (const auto& p : root.value("partition", json::array())) scheme.partition.emplace_back(p.at(0).get<int>(), p.at(1).get<int>());
  scheme.placement = root.at("placement").get<std::vector<int>>();
  const std::map<std::string, PipeOp> ops = {{"F", PipeOp::F}, {"B", PipeOp::B}, {"W", PipeOp::W}, {"BW", PipeOp::BW}};
  for (const auto& device : root.at("schedule")) {
    std::vector<PipeTask> list;
    for (const auto& entry : device) {
      std::istringstream in(entry.get<std::string>());
      std::string op;
      PipeTask t;
      if (!(in >> op >> t.microbatch >> t.stage) || !ops.count(op))
        return make_error(source + ": schedule entry '" + entry.get<std::string>() + "' is not 'OP microbatch stage'");
      t.op = ops.at(op);
      list.push_back(t);
    }
    scheme.schedule.push_back(list);
  }
  auto ok = scheme.check();
  if (!ok) return make_error(source + ": " + ok.error().message);
  return scheme;
} catch (const nlohmann::json::exception& e) {
  return make_error(source + ": " + e.what());
}

}  // namespace gantry
