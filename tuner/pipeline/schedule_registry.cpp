#include "tuner/pipeline/schedule_registry.hpp"

#include <cstdlib>
#include <stdexcept>

namespace gantry {

namespace {

std::function<Result<StageLayout>(const std::string&)> fixed_layout(const std::string& name, StageLayout layout) {
  return [name, layout](const std::string& argument) -> Result<StageLayout> {
    if (!argument.empty()) return make_error("schedule '" + name + ":" + argument + "': " + name + " takes no argument");
    return layout;
  };
}

Result<StageLayout> interleaved_layout(const std::string& argument) {
  if (argument.empty()) return StageLayout{2, false};
  const bool digits = argument.size() <= 6 && argument.find_first_not_of("0123456789") == std::string::npos;
  const int v = digits ? std::atoi(argument.c_str()) : 0;
  // One chunk is not Megatron's interleaving (its warm-up formula would hold twice 1F1B's
  // microbatches for the same order): that schedule is 1f1b.
  if (v < 2)
    return make_error("schedule 'interleaved:" + argument + "': expected interleaved:V with V a whole number >= 2 (one chunk per device is 1f1b)");
  return StageLayout{v, false};
}

ScheduleRegistry make_builtin() {
  ScheduleRegistry r;
  auto must = [](Status s) {
    if (!s) throw std::logic_error(s.error().message);
  };
  must(r.add({"gpipe", "gpipe", "every forward, then every fused backward", fixed_layout("gpipe", {}),
              [](int p, int m, const StageLayout&, const StageCosts&) { return make_gpipe(p, m); }}));
  must(r.add({"1f1b", "1f1b", "PipeDream-flush: warm-up forwards, then one forward one backward",
              fixed_layout("1f1b", {}), [](int p, int m, const StageLayout&, const StageCosts&) { return make_1f1b(p, m); }}));
  must(r.add({"interleaved", "interleaved[:V]", "Megatron's interleaved 1F1B with V chunks per device (default 2)",
              interleaved_layout,
              [](int p, int m, const StageLayout& l, const StageCosts&) { return make_interleaved(p, l.chunks, m); }}));
  must(r.add({"zb", "zb", "zero-bubble (ZB-H1 style) list schedule with split B and W under the memory limit",
              fixed_layout("zb", {}),
              [](int p, int m, const StageLayout&, const StageCosts& c) { return make_zb_h1(p, m, c); }}));
  must(r.add({"zbv", "zbv", "zero-bubble V: two chunks per device in a V", fixed_layout("zbv", {2, true}),
              [](int p, int m, const StageLayout&, const StageCosts& c) { return make_zb_v(p, m, c); }}));
  return r;
}

}  // namespace

Status ScheduleRegistry::add(ScheduleKind kind) {
  if (kind.name.empty() || kind.name.find(':') != std::string::npos || kind.name.find(',') != std::string::npos)
    return make_error("schedule registry: '" + kind.name + "' is not a valid schedule name");
  if (!kind.layout || !kind.build) return make_error("schedule registry: '" + kind.name + "' needs a layout and a builder");
  for (const ScheduleKind& k : kinds_)
    if (k.name == kind.name) return make_error("schedule registry: '" + kind.name + "' is already registered");
  if (kind.usage.empty()) kind.usage = kind.name;
  kinds_.push_back(std::move(kind));
  return Ok{};
}

Result<ScheduleChoice> ScheduleRegistry::find(const std::string& spec) const {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
  for (const ScheduleKind& k : kinds_)
    if (k.name == name) {
      if (colon != std::string::npos && argument.empty())
        return make_error("schedule '" + spec + "': expected " + k.usage);
      auto layout = k.layout(argument);
      if (!layout) return layout.error();
      return ScheduleChoice{&k, layout.value()};
    }
  return make_error("unknown schedule '" + spec + "' (expected " + usage() + ")");
}

std::string ScheduleRegistry::usage() const {
  std::string out;
  for (const ScheduleKind& k : kinds_) out += (out.empty() ? "" : ", ") + k.usage;
  return out;
}

std::string ScheduleRegistry::help() const {
  std::string out;
  for (const ScheduleKind& k : kinds_) out += (out.empty() ? "" : "\n") + k.usage + ": " + k.description;
  return out;
}

ScheduleRegistry& schedule_registry() {
  static ScheduleRegistry registry = make_builtin();
  return registry;
}

}  // namespace gantry
