#include "learner/episode.hpp"

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

Status Episode::check(int n, int d) const {
  if (devices != d) return make_error("episode for " + std::to_string(devices) + " devices, not " + std::to_string(d));
  if (steps() != n) return make_error("episode of " + std::to_string(steps()) + " steps for a graph of " + std::to_string(n) + " ops");
  std::vector<bool> seen(n, false);
  for (OpId op : ops) {
    if (op < 0 || op >= n || seen[op]) return make_error("episode places op " + std::to_string(op) + " twice or out of range");
    seen[op] = true;
  }
  for (std::int32_t x : device)
    if (x < 0 || x >= d) return make_error("episode uses device " + std::to_string(x));
  for (const auto* list : {&candidates, &teacher_ops})
    for (std::int32_t op : *list)
      if (op < 0 || op >= n) return make_error("episode names op " + std::to_string(op) + " out of range");
  for (std::int32_t x : teacher_devices)
    if (x < 0 || x >= d) return make_error("episode's teacher uses device " + std::to_string(x));
  const std::size_t s = ops.size();
  if (device.size() != s || behaviour_logp.size() != s) return make_error("episode has arrays of different lengths");
  if (!device_features.empty() && device_features.size() != s * d * kDeviceFeatures)
    return make_error("episode has device features of the wrong size");
  if (!offsets_valid(candidate_offsets, s, candidates.size()) || !offsets_valid(teacher_op_offsets, s, teacher_ops.size()) ||
      !offsets_valid(teacher_device_offsets, s, teacher_devices.size()))
    return make_error("episode has inconsistent offsets");
  if (!candidate_features.empty() && candidate_features.size() != candidates.size() * kCandidateFeatures)
    return make_error("episode has candidate features of the wrong size");
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
