#include "core/pipeline_scheme.hpp"

#include <algorithm>

#include <cmath>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "core/json_util.hpp"
#include "core/largest_total.hpp"

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

// A whole number field (an integer, or a number such as 1e3 with no fraction) in [1, 2^31).
Result<std::int64_t> whole_number(const json& root, const char* key, const std::string& source) {
  auto it = root.find(key);
  if (it == root.end()) return make_error(source + ": missing field '" + key + "'");
  const double value = it->is_number() ? it->get<double>() : std::nan("");
  if (!(value >= 1 && value < 2147483648.0) || value != std::floor(value))
    return make_error(source + ": '" + key + "' must be a whole number >= 1 (got " + it->dump() + ")");
  return static_cast<std::int64_t>(value);
}

}  // namespace

Status check_pipeline_size(std::int64_t microbatches, std::int64_t stages, const std::string& microbatches_input) {
  if (microbatches < 1) return make_error(microbatches_input + ": the microbatch count must be at least 1");
  if (stages < 1) return make_error(microbatches_input + ": the pipeline needs at least one stage");
  if (stages > kMaxPipelineTasks / 3 || microbatches > kMaxPipelineTasks / (3 * stages))
    return make_error(microbatches_input + ": " + std::to_string(microbatches) + " microbatches x " +
                      std::to_string(stages) + " stages x 3 tasks exceeds the limit of " +
                      std::to_string(kMaxPipelineTasks) + " tasks (at most " +
                      std::to_string(kMaxPipelineTasks / (3 * stages)) + " microbatches with " +
                      std::to_string(stages) + " stages)");
  return Ok{};
}

const char* to_string(PipeOp op) { return kOpNames[static_cast<int>(op)]; }

std::string task_name(const PipeTask& task) {
  return std::string(to_string(task.op)) + "(" + std::to_string(task.microbatch) + "," + std::to_string(task.stage) +
         ")";
}

Status PipelineScheme::check() const {
  const int stages = num_stages(), devices = num_devices();
  if (stages == 0) return make_error("pipeline scheme: no stages");
  if (num_microbatches <= 0) return make_error("pipeline scheme: the microbatch count must be at least 1");
  if (!offload.empty() && static_cast<int>(offload.size()) != stages)
    return make_error("pipeline scheme: offload gives " + std::to_string(offload.size()) + " fractions for " +
                      std::to_string(stages) + " stages");
  if (reload_ahead < 1) return make_error("pipeline scheme: reload_ahead must be at least 1 task");
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
      auto what = [&] { return task_name(t); };  // only for an error
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
      const int bw = slot(PipeOp::BW, m, s), b = slot(PipeOp::B, m, s), w = slot(PipeOp::W, m, s);
      const bool fused = bw == 1 && b == 0 && w == 0;
      const bool split = bw == 0 && b == 1 && w == 1;
      if (!fused && !split)
        return make_error("pipeline scheme: " + where() + " needs either BW or both B and W, exactly once (it has " +
                          std::to_string(bw) + " BW, " + std::to_string(b) + " B, " + std::to_string(w) + " W)");
    }
  return Ok{};
}

TaskCost task_cost(PipeOp op, int s, const StageCosts& c) {
  const double transient = c.transient_b.empty() ? 0.0 : c.transient_b[s];
  switch (op) {
    case PipeOp::F: return {c.f[s], c.mem_f[s], 0};
    case PipeOp::B:
      return c.mem_b[s] > 0 ? TaskCost{c.b[s], c.mem_b[s] + transient, transient}
                            : TaskCost{c.b[s], transient, transient - c.mem_b[s]};
    case PipeOp::W: return {c.w[s], 0, -c.mem_w[s]};
    case PipeOp::BW: {
      const double held = std::max(0.0, c.mem_b[s]);
      return {c.b[s] + c.w[s], held + transient, held + transient - (c.mem_b[s] + c.mem_w[s])};
    }
  }
  return {};
}

Status recompute_stage(StageCosts& c, int s) {
  const std::size_t n = c.f.size();
  if (c.input_bytes.size() != n || c.w_grad_bytes.size() != n)
    return make_error("recomputation needs each stage's input and gradient sizes, which per-stage cost files do not give");
  if (s < 0 || static_cast<std::size_t>(s) >= n) return make_error("recompute: no stage " + std::to_string(s));
  if (c.transient_b.size() != n) c.transient_b.assign(n, 0.0);
  const double act = c.mem_f[s], in = std::min(c.input_bytes[s], act), wgrad = c.w_grad_bytes[s];
  c.b[s] += c.f[s];
  c.mem_f[s] = in;
  c.mem_b[s] += act - in;  // B ends with what it ends with without recomputation, less the input
  // While B runs: the kept input (part of the activations), the rest rebuilt, and B's gradients:
  // act + wgrad in all, so act - in + wgrad on top of F's, of which mem_b stays after B.
  c.transient_b[s] = act - in + wgrad - std::max(0.0, c.mem_b[s]);
  return Ok{};
}

bool StageCosts::offloads() const {
  return std::any_of(offload.begin(), offload.end(), [](double bytes) { return bytes > 0; });
}

Status offload_stage(StageCosts& c, int s, double fraction) {
  const std::size_t n = c.f.size();
  if (s < 0 || static_cast<std::size_t>(s) >= n) return make_error("offload: no stage " + std::to_string(s));
  if (!(fraction >= 0 && fraction <= 1))
    return make_error("offload: stage " + std::to_string(s) + "'s fraction must be between 0 and 1 (got " +
                      std::to_string(fraction) + ")");
  if (c.host_bandwidth.size() != n || !(c.host_bandwidth[s] > 0))
    return make_error("stage " + std::to_string(s) + "'s device has no host bandwidth to offload over (a cluster "
                      "gives it as its devices' host_gbs; per-stage cost files do not)");
  if (c.offload.size() != n) c.offload.assign(n, 0.0);
  c.offload[s] = fraction * c.mem_f[s];
  return Ok{};
}

Status normalize_offload(std::vector<double>& fractions, int num_stages, const std::string& where) {
  if (fractions.empty()) return Ok{};
  if (static_cast<int>(fractions.size()) != num_stages)
    return make_error(where + ": " + std::to_string(fractions.size()) + " fractions, expected one per stage (" +
                      std::to_string(num_stages) + ")");
  for (std::size_t s = 0; s < fractions.size(); ++s)
    if (!(fractions[s] >= 0 && fractions[s] <= 1))
      return make_error(where + ": stage " + std::to_string(s) + "'s fraction must be between 0 and 1 (got " +
                        std::to_string(fractions[s]) + ")");
  if (std::all_of(fractions.begin(), fractions.end(), [](double f) { return f == 0; })) fractions.clear();
  return Ok{};
}

Status normalize_recompute(std::vector<int>& stages, int num_stages, const std::string& where) {
  std::sort(stages.begin(), stages.end());
  stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
  for (int s : stages)
    if (s < 0 || s >= num_stages)
      return make_error(where + ": stage " + std::to_string(s) + " does not exist (" + std::to_string(num_stages) + " stages)");
  return Ok{};
}

Status StageCosts::check(const std::string& source) const {
  const std::size_t n = f.size();
  if (n == 0) return make_error(source + ": no stages");
  for (auto [name, list] : {std::pair{"cost_b", &b}, std::pair{"cost_w", &w}, std::pair{"cost_comm", &comm},
                            std::pair{"mem_f", &mem_f}, std::pair{"mem_b", &mem_b}, std::pair{"mem_w", &mem_w},
                            std::pair{"static_memory", &static_memory}, std::pair{"flops", &flops}})
    if (list->size() != n) return make_error(source + ": '" + name + "' has " + std::to_string(list->size()) +
                                             " entries, expected one per stage (" + std::to_string(n) + ")");
  auto at = [&](const char* name, std::size_t i) { return source + ": " + name + "[" + std::to_string(i) + "]"; };
  // Every value at most this, so that a schedule's sums over its (at most kMaxPipelineTasks) tasks
  // stay finite: a cost of 1e308 made iteration times of inf and stalled the list scheduler.
  const double largest = kLargestTotal / static_cast<double>(kMaxPipelineTasks);
  auto too_large = [&](const char* name, std::size_t i, double value) -> Status {
    if (std::fabs(value) <= largest) return Ok{};
    std::ostringstream out;
    out << at(name, i) << " is " << value << ": at most " << largest << " (a schedule's sums of it must stay finite)";
    return make_error(out.str());
  };
  for (std::size_t s = 0; s < n; ++s) {
    for (auto [name, value] : {std::pair{"cost_f", f[s]}, std::pair{"cost_b", b[s]}, std::pair{"cost_w", w[s]},
                               std::pair{"cost_comm", comm[s]}, std::pair{"static_memory", static_memory[s]},
                               std::pair{"flops", flops[s]}, std::pair{"mem_f", mem_f[s]}})
      if (!std::isfinite(value) || value < 0)
        return make_error(at(name, s) + " must be a finite number >= 0 (got " + std::to_string(value) + ")");
    if (!std::isfinite(mem_b[s])) return make_error(at("mem_b", s) + " must be a finite number");
    if (!std::isfinite(mem_w[s]) || mem_w[s] > 0)
      return make_error(at("mem_w", s) + " must be a finite number <= 0 (W frees memory; got " +
                        std::to_string(mem_w[s]) + ")");
    if (mem_f[s] + mem_b[s] + mem_w[s] < -1e-6 * std::max(1.0, mem_f[s]))
      return make_error(source + ": stage " + std::to_string(s) + ": B and W free more than F allocates");
    for (auto [name, value] : {std::pair{"cost_f", f[s]}, std::pair{"cost_b", b[s]}, std::pair{"cost_w", w[s]},
                               std::pair{"cost_comm", comm[s]}, std::pair{"static_memory", static_memory[s]},
                               std::pair{"flops", flops[s]}, std::pair{"mem_f", mem_f[s]}, std::pair{"mem_b", mem_b[s]},
                               std::pair{"mem_w", mem_w[s]}})
      if (Status ok = too_large(name, s, value); !ok) return ok;
  }
  for (auto [name, list] : {std::pair{"input_bytes", &input_bytes}, std::pair{"w_grad_bytes", &w_grad_bytes},
                            std::pair{"transient_b", &transient_b}, std::pair{"offload", &offload},
                            std::pair{"host_bandwidth", &host_bandwidth}}) {
    if (!list->empty() && list->size() != n)
      return make_error(source + ": '" + name + "' has " + std::to_string(list->size()) + " entries, expected none or " +
                        std::to_string(n));
    for (std::size_t s = 0; s < list->size(); ++s) {
      if (!std::isfinite((*list)[s]) || (*list)[s] < 0) return make_error(at(name, s) + " must be a finite number >= 0");
      if (Status ok = too_large(name, s, (*list)[s]); !ok) return ok;
    }
  }
  for (std::size_t s = 0; s < offload.size(); ++s) {
    if (offload[s] > mem_f[s] * (1 + 1e-12))
      return make_error(at("offload", s) + " offloads more than F allocates (" + std::to_string(offload[s]) + " > " +
                        std::to_string(mem_f[s]) + " bytes)");
    if (offload[s] > 0 && (host_bandwidth.size() != n || !(host_bandwidth[s] > 0)))
      return make_error(at("offload", s) + ": the stage's device has no host bandwidth to offload over");
    if (offload[s] > 0 && !(offload[s] / host_bandwidth[s] <= largest))  // a copy's time, summed over the tasks
      return make_error(at("offload", s) + ": " + std::to_string(offload[s]) + " bytes over a host bandwidth of " +
                        std::to_string(host_bandwidth[s]) + " bytes/s take longer than a schedule can add up");
  }
  for (std::size_t d = 0; d < max_mem.size(); ++d)
    if (!std::isfinite(max_mem[d]) || max_mem[d] < 0)
      return make_error(at("max_mem", d) + " must be a finite number of bytes > 0 (got " +
                        std::to_string(max_mem[d]) + ")");
  return Ok{};
}

Result<std::pair<StageCosts, int>> read_stage_costs_json(const std::string& text, const std::string& source) try {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  const json& root = parsed.value();
  if (!root.is_object()) return make_error(source + ": expected a JSON object (zero-bubble GraphConfig fields)");
  // print_scaling: a field of the public GraphConfig that only scales its printout.
  if (Status ok = check_known_keys(root, {"n_stages", "n_micro", "cost_f", "cost_b", "cost_w", "cost_comm", "mem_f", "mem_b",
                                          "mem_w", "max_mem", "static_memory", "flops", "print_scaling"},
                                   source);
      !ok)
    return ok.error();
  std::int64_t stages = 0;
  if (root.contains("n_stages")) {
    auto n = whole_number(root, "n_stages", source);
    if (!n) return n.error();
    stages = n.value();
  } else if (root.contains("cost_f") && root["cost_f"].is_array()) {
    stages = static_cast<std::int64_t>(root["cost_f"].size());
  }
  if (stages <= 0) return make_error(source + ": 'n_stages' (or a 'cost_f' list) must give at least one stage");
  if (stages > kMaxDevices)  // a stage file's stages are its devices
    return make_error(source + ": n_stages " + std::to_string(stages) + ": one stage per device, and at most " +
                      std::to_string(kMaxDevices) + " devices");
  auto micro = whole_number(root, "n_micro", source);
  if (!micro) return micro.error();
  auto size = check_pipeline_size(micro.value(), stages, source + ": n_micro");
  if (!size) return size.error();
  const int n = static_cast<int>(stages);
  StageCosts c;
  std::vector<double>* targets[] = {&c.f, &c.b, &c.w};
  const char* keys[] = {"cost_f", "cost_b", "cost_w"};
  for (int k = 0; k < 3; ++k) {
    auto list = number_list(root, keys[k], n, source, true);
    if (!list) return list.error();
    *targets[k] = list.value();
  }
  // cost_comm: one number for every hop, or the n - 1 hops between neighbours (a last entry, the
  // hop after the last stage, is accepted and ignored).
  const auto comm = root.find("cost_comm");
  const bool hops_only = comm != root.end() && comm->is_array() && static_cast<int>(comm->size()) == n - 1 && n > 1;
  auto comm_list = number_list(root, "cost_comm", hops_only ? n - 1 : n, source, false, 0.0);
  if (!comm_list) return comm_list.error();
  c.comm = comm_list.value();
  c.comm.resize(n, 0.0);
  for (auto [key, target] : {std::pair{"mem_f", &c.mem_f}, std::pair{"mem_b", &c.mem_b}, std::pair{"mem_w", &c.mem_w},
                             std::pair{"static_memory", &c.static_memory}, std::pair{"flops", &c.flops}}) {
    auto list = number_list(root, key, n, source, false, 0.0);
    if (!list) return list.error();
    *target = list.value();
  }
  if (root.contains("max_mem")) {
    const int devices = root["max_mem"].is_array() ? static_cast<int>(root["max_mem"].size()) : n;
    if (devices != n) return make_error(source + ": 'max_mem' must be a number or a list of " + std::to_string(n) + " numbers");
    auto list = number_list(root, "max_mem", devices, source, false);
    if (!list) return list.error();
    c.max_mem = list.value();
    for (int d = 0; d < devices; ++d)
      if (!(c.max_mem[d] > 0) || !std::isfinite(c.max_mem[d]))
        return make_error(source + ": max_mem[" + std::to_string(d) + "] must be a number of bytes > 0 (got " +
                          std::to_string(c.max_mem[d]) + "; leave max_mem out for no limit)");
  }
  auto ok = c.check(source);
  if (!ok) return ok.error();
  return std::pair{c, static_cast<int>(micro.value())};
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
  if (!scheme.recompute.empty()) root["recompute"] = scheme.recompute;
  if (!scheme.offload.empty()) {
    root["offload"] = scheme.offload;
    root["reload_ahead"] = scheme.reload_ahead;
  }
  return root.dump(indent);
}

namespace {

// Per-device task lists, each task written 'OP MICROBATCH STAGE'; errors name `where`[d][i].
Result<std::vector<std::vector<PipeTask>>> schedule_lists(const json& lists, const std::string& where) {
  if (!lists.is_array()) return make_error(where + ": expected a list of task lists, one per device");
  const std::map<std::string, PipeOp> ops = {{"F", PipeOp::F}, {"B", PipeOp::B}, {"W", PipeOp::W}, {"BW", PipeOp::BW}};
  std::vector<std::vector<PipeTask>> out;
  for (std::size_t d = 0; d < lists.size(); ++d) {
    const json& device = lists[d];
    if (!device.is_array()) return make_error(where + "[" + std::to_string(d) + "]: expected a list of tasks");
    std::vector<PipeTask> list;
    for (std::size_t i = 0; i < device.size(); ++i) {
      const json& entry = device[i];
      const std::string at = where + "[" + std::to_string(d) + "][" + std::to_string(i) + "]: ";
      if (!entry.is_string()) return make_error(at + "expected 'OP MICROBATCH STAGE', got " + entry.dump());
      std::istringstream in(entry.get<std::string>());
      std::string op, rest;
      PipeTask t;
      if (!(in >> op >> t.microbatch >> t.stage) || !ops.count(op) || (in >> rest))
        return make_error(at + "'" + entry.get<std::string>() + "' is not 'OP MICROBATCH STAGE' with OP one of F, B, W, BW");
      t.op = ops.at(op);
      list.push_back(t);
    }
    out.push_back(std::move(list));
  }
  return out;
}

}  // namespace

Result<std::vector<std::vector<PipeTask>>> read_schedule_lists(const std::string& text, const std::string& source) try {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  return schedule_lists(parsed.value(), source);
} catch (const nlohmann::json::exception& e) {
  return make_error(source + ": " + e.what());
}

Result<PipelineScheme> scheme_from_json(const std::string& text, const std::string& source) try {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  const json& root = parsed.value();
  if (!root.is_object()) return make_error(source + ": expected a JSON object (a gantry-pipeline-scheme)");
  if (Status ok = check_known_keys(root, {"format", "version", "microbatches", "partition", "placement", "schedule",
                                          "recompute", "offload", "reload_ahead"},
                                   source);
      !ok)
    return ok.error();
  if (Status ok = check_format_and_version(root, "gantry-pipeline-scheme", source + ": $"); !ok) return ok.error();
  PipelineScheme scheme;
  auto placement = root.find("placement");
  if (placement == root.end() || !placement->is_array() || placement->empty())
    return make_error(source + ": placement: expected a list with the device of every stage");
  for (std::size_t s = 0; s < placement->size(); ++s) {
    const json& d = (*placement)[s];
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0 || d.get<std::int64_t>() > 1000000)
      return make_error(source + ": placement[" + std::to_string(s) + "]: expected a device index >= 0, got " + d.dump());
    scheme.placement.push_back(d.get<int>());
  }
  auto micro = whole_number(root, "microbatches", source);
  if (!micro) return micro.error();
  auto size = check_pipeline_size(micro.value(), scheme.num_stages(), source + ": microbatches");
  if (!size) return size.error();
  scheme.num_microbatches = static_cast<int>(micro.value());
  const json partition = root.value("partition", json::array());
  if (!partition.is_array()) return make_error(source + ": partition: expected a list of [first, end) layer ranges");
  for (std::size_t s = 0; s < partition.size(); ++s) {
    const json& range = partition[s];
    if (!range.is_array() || range.size() != 2 || !range[0].is_number_integer() || !range[1].is_number_integer() ||
        range[0].get<std::int64_t>() < 0 || range[0].get<std::int64_t>() > 2147483647 ||
        range[1].get<std::int64_t>() < 0 || range[1].get<std::int64_t>() > 2147483647)
      return make_error(source + ": partition[" + std::to_string(s) + "]: expected [first, end) layer indices, got " +
                        range.dump());
    scheme.partition.emplace_back(range[0].get<int>(), range[1].get<int>());
  }
  auto schedule = root.find("schedule");
  if (schedule == root.end() || !schedule->is_array())
    return make_error(source + ": schedule: expected a list of task lists, one per device");
  auto lists = schedule_lists(*schedule, source + ": schedule");
  if (!lists) return lists.error();
  scheme.schedule = std::move(lists).value();
  if (root.contains("recompute")) {
    const json& stages = root["recompute"];
    if (!stages.is_array()) return make_error(source + ": recompute: expected a list of stage numbers");
    for (const json& s : stages) {
      if (!s.is_number_integer()) return make_error(source + ": recompute: expected stage numbers, got " + s.dump());
      scheme.recompute.push_back(static_cast<int>(std::clamp<std::int64_t>(s.get<std::int64_t>(), -1, 1 << 30)));
    }
    if (Status ok = normalize_recompute(scheme.recompute, scheme.num_stages(), source + ": recompute"); !ok) return ok.error();
  }
  if (root.contains("offload")) {
    const json& fractions = root["offload"];
    if (!fractions.is_array()) return make_error(source + ": offload: expected a list of fractions, one per stage");
    for (const json& f : fractions) {
      if (!f.is_number()) return make_error(source + ": offload: expected fractions between 0 and 1, got " + f.dump());
      scheme.offload.push_back(f.get<double>());
    }
    if (Status ok = normalize_offload(scheme.offload, scheme.num_stages(), source + ": offload"); !ok) return ok.error();
  }
  if (root.contains("reload_ahead")) {
    auto ahead = whole_number(root, "reload_ahead", source);
    if (!ahead) return ahead.error();
    scheme.reload_ahead = static_cast<int>(std::min<std::int64_t>(ahead.value(), 1 << 20));
  }
  auto ok = scheme.check();
  if (!ok) return make_error(source + ": " + ok.error().message);
  return scheme;
} catch (const nlohmann::json::exception& e) {
  return make_error(source + ": " + e.what());
}

}  // namespace gantry
