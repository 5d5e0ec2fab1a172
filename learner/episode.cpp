#include "learner/episode.hpp"

#include <cmath>
#include <cstring>

#include "core/msgpack.hpp"
#include "learner/policy_config.hpp"

namespace gantry {
namespace {

// Arrays travel as raw little-endian bin values: an episode holds thousands of numbers.
template <class T>
void put_array(MsgpackWriter& w, const char* name, const std::vector<T>& v) {
  w.str(name);
  w.bin(std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

template <class T>
bool get_array(MsgpackReader& in, std::vector<T>& v) {
  std::string_view raw;
  if (!in.bin(raw) || raw.size() % sizeof(T) != 0) return false;
  v.resize(raw.size() / sizeof(T));
  if (!raw.empty()) std::memcpy(v.data(), raw.data(), raw.size());
  return true;
}

bool offsets_valid(const std::vector<std::int32_t>& offsets, std::size_t steps, std::size_t items) {
  if (offsets.empty()) return items == 0;
  if (offsets.size() != steps + 1 || offsets.front() != 0 || static_cast<std::size_t>(offsets.back()) != items)
    return false;
  for (std::size_t t = 0; t < steps; ++t)
    if (offsets[t] > offsets[t + 1]) return false;
  return true;
}

}  // namespace

Placement Episode::placement(const std::vector<double>& priority) const {
  Placement p;
  p.device.assign(ops.size(), 0);
  for (std::size_t t = 0; t < ops.size(); ++t) p.device[ops[t]] = device[t];
  p.priority = priority;
  return p;
}

Status Episode::check(const Graph& graph, int d, Ablation ablation) const {
  const int n = graph.size();
  const std::size_t steps_n = ops.size();
  auto fail = [](const std::string& what) { return make_error("episode " + what); };
  if (devices != d) return fail("for " + std::to_string(devices) + " devices, not " + std::to_string(d));
  if (steps() != n) return fail("of " + std::to_string(steps()) + " steps for a graph of " + std::to_string(n) + " ops");
  if (device.size() != steps_n || behaviour_logp.size() != steps_n) return fail("has arrays of different lengths");
  if (!std::isfinite(makespan) || makespan < 0 || !std::isfinite(planned)) return fail("has a makespan that is not a finite time");
  // Every op once, each after all its predecessors (a topological order: replaying it is safe).
  std::vector<bool> placed(n, false);
  for (OpId op : ops) {
    if (op < 0 || op >= n || placed[op]) return fail("places op " + std::to_string(op) + " twice or out of range");
    for (OpId p : graph.preds(op))
      if (!placed[p]) return fail("places op " + std::to_string(op) + " before its predecessor " + std::to_string(p));
    placed[op] = true;
  }
  for (std::int32_t x : device)
    if (x < 0 || x >= d) return fail("uses device " + std::to_string(x));
  const bool sel = ablation == Ablation::dual || ablation == Ablation::random_sel;
  if (!offsets_valid(teacher_op_offsets, steps_n, teacher_ops.size()) || teacher_op_offsets.size() != steps_n + 1 ||
      !offsets_valid(teacher_device_offsets, steps_n, teacher_devices.size()) || teacher_device_offsets.size() != steps_n + 1 ||
      !offsets_valid(candidate_offsets, steps_n, candidates.size()) || (sel && candidate_offsets.size() != steps_n + 1))
    return fail("has inconsistent offsets");
  for (std::size_t t = 0; t < steps_n; ++t) {
    if (teacher_op_offsets[t] == teacher_op_offsets[t + 1] || teacher_device_offsets[t] == teacher_device_offsets[t + 1])
      return fail("has a step without the teacher's choice");
    if (sel) {
      int chosen = 0;
      for (std::int32_t k = candidate_offsets[t]; k < candidate_offsets[t + 1]; ++k) chosen += candidates[k] == ops[t];
      if (chosen != 1) return fail("has a step whose op is not once among its candidates");
    }
  }
  for (const auto* list : {&candidates, &teacher_ops})
    for (std::int32_t op : *list)
      if (op < 0 || op >= n) return fail("names op " + std::to_string(op) + " out of range");
  for (std::int32_t x : teacher_devices)
    if (x < 0 || x >= d) return fail("has a teacher device out of range");
  if (device_features.size() != (ablation == Ablation::gdp ? 0 : steps_n * d * kDeviceFeatures))
    return fail("has device features of the wrong size");
  if (candidate_features.size() != (ablation == Ablation::dual ? candidates.size() * kCandidateFeatures : 0))
    return fail("has candidate features of the wrong size");
  for (const auto* floats : {&device_features, &candidate_features, &behaviour_logp})
    for (float x : *floats)
      if (!std::isfinite(x)) return fail("holds a number that is not finite");
  return Ok{};
}

std::string Episode::to_bytes() const {
  MsgpackWriter w;
  w.map(18);
  w.str("version"); w.uint(version);
  w.str("problem"); w.sint(problem);
  w.str("devices"); w.sint(devices);
  put_array(w, "ops", ops);
  put_array(w, "device", device);
  put_array(w, "candidate_offsets", candidate_offsets);
  put_array(w, "candidates", candidates);
  put_array(w, "teacher_op_offsets", teacher_op_offsets);
  put_array(w, "teacher_ops", teacher_ops);
  put_array(w, "teacher_device_offsets", teacher_device_offsets);
  put_array(w, "teacher_devices", teacher_devices);
  put_array(w, "candidate_features", candidate_features);
  put_array(w, "device_features", device_features);
  put_array(w, "behaviour_logp", behaviour_logp);
  w.str("sel_matches"); w.sint(sel_matches);
  w.str("plc_matches"); w.sint(plc_matches);
  w.str("makespan"); w.real(makespan);
  w.str("planned"); w.real(planned);
  return w.take();
}

Result<Episode> Episode::from_bytes(const std::string& bytes, const std::string& source) {
  auto fail = [&](const std::string& what) { return make_error(source + ": episode " + what); };
  MsgpackReader in(bytes);
  std::uint32_t fields = 0;
  if (!in.map(fields)) return fail("is not a MessagePack map");
  Episode e;
  for (std::uint32_t i = 0; i < fields; ++i) {
    std::string_view key;
    if (!in.str(key)) return fail("has a field name that is not a string");
    std::int64_t small = 0;
    bool ok = true;
    if (key == "version") ok = in.uint(e.version);
    else if (key == "problem") ok = in.sint(small) && small >= 0 && (e.problem = static_cast<int>(small), true);
    else if (key == "devices") ok = in.sint(small) && small > 0 && (e.devices = static_cast<int>(small), true);
    else if (key == "ops") ok = get_array(in, e.ops);
    else if (key == "device") ok = get_array(in, e.device);
    else if (key == "candidate_offsets") ok = get_array(in, e.candidate_offsets);
    else if (key == "candidates") ok = get_array(in, e.candidates);
    else if (key == "teacher_op_offsets") ok = get_array(in, e.teacher_op_offsets);
    else if (key == "teacher_ops") ok = get_array(in, e.teacher_ops);
    else if (key == "teacher_device_offsets") ok = get_array(in, e.teacher_device_offsets);
    else if (key == "teacher_devices") ok = get_array(in, e.teacher_devices);
    else if (key == "candidate_features") ok = get_array(in, e.candidate_features);
    else if (key == "device_features") ok = get_array(in, e.device_features);
    else if (key == "behaviour_logp") ok = get_array(in, e.behaviour_logp);
    else if (key == "sel_matches") ok = in.sint(small) && (e.sel_matches = static_cast<int>(small), true);
    else if (key == "plc_matches") ok = in.sint(small) && (e.plc_matches = static_cast<int>(small), true);
    else if (key == "makespan") ok = in.real(e.makespan);
    else if (key == "planned") ok = in.real(e.planned);
    else ok = in.skip();
    if (!ok) return fail("field \"" + std::string(key) + "\" is malformed");
  }
  const std::size_t steps = e.ops.size();
  if (e.devices < 1) return fail("has no device count");
  if (e.device.size() != steps || e.behaviour_logp.size() != steps)
    return fail("has arrays of different lengths");
  if (!e.device_features.empty() && e.device_features.size() != steps * e.devices * kDeviceFeatures)
    return fail("has device features of the wrong size");
  if (!e.candidate_features.empty() && e.candidate_features.size() != e.candidates.size() * kCandidateFeatures)
    return fail("has candidate features of the wrong size");
  if (!offsets_valid(e.candidate_offsets, steps, e.candidates.size()) ||
      !offsets_valid(e.teacher_op_offsets, steps, e.teacher_ops.size()) ||
      !offsets_valid(e.teacher_device_offsets, steps, e.teacher_devices.size()))
    return fail("has inconsistent offsets");
  for (std::int32_t d : e.device)
    if (d < 0 || d >= e.devices) return fail("places an op on device " + std::to_string(d));
  for (std::int32_t d : e.teacher_devices)
    if (d < 0 || d >= e.devices) return fail("has a teacher device out of range");
  return e;
}

}  // namespace gantry
