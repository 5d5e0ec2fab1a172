#include "learner/policy_weights.hpp"

#include <cstring>
#include <stdexcept>

#include "core/msgpack.hpp"

namespace gantry {
namespace {

constexpr const char* kFormat = "gantry-policy";
// 2: PLC sees the device index and SEL the op id rank (learner/placement_env.hpp); 3: and both
// the teacher's key as a flag. An older policy reads those places differently, so it is refused
// rather than misread.
constexpr int kFormatVersion = 3;

// Elements of a shape, or -1 beyond 2^31 (no policy is that large; the product cannot overflow).
std::int64_t elements(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) {
    if (s != 0 && n > (std::int64_t{1} << 31) / s) return -1;
    n *= s;
  }
  return n;
}

// A Linear(in -> out) as two layout entries.
void linear(std::vector<TensorShape>& out, const std::string& name, std::int64_t in, std::int64_t outs) {
  out.push_back({name + ".w", {outs, in}});
  out.push_back({name + ".b", {outs}});
}

}  // namespace

std::vector<TensorShape> policy_layout(const PolicyConfig& c) {
  const std::int64_t h = c.hidden, a = c.head, st = c.state;
  std::vector<TensorShape> out;
  linear(out, "enc.in", kNodeFeatures, h);
  for (const char* dir : {"enc.fwd", "enc.bwd"}) {  // messages along and against the edges
    linear(out, dir, h, h);
    out.push_back({std::string(dir) + ".e", {h}});   // how the edge's transfer cost enters
  }
  out.push_back({"enc.gru.wih", {3 * h, 2 * h}});
  out.push_back({"enc.gru.whh", {3 * h, h}});
  out.push_back({"enc.gru.bih", {3 * h}});
  out.push_back({"enc.gru.bhh", {3 * h}});
  if (c.ablation == Ablation::gdp) {
    linear(out, "gdp", h, c.devices);
    return out;
  }
  if (c.ablation == Ablation::dual) {
    linear(out, "sel.x", kNodeFeatures, h);
    // score = static part (once per op) + dynamic part (per candidate and step, kept narrow)
    linear(out, "sel.l1", 4 * h, a);  // [h_v, features, bottom path, top path]
    linear(out, "sel.l2", a, 1);
    linear(out, "sel.d", kCandidateFeatures, st);
    linear(out, "sel.q", st, 1);
  }
  linear(out, "plc.f", kDeviceFeatures, st);
  linear(out, "plc.l1", st + 2 * h, a);  // [device features, h_v, ops already on the device]
  linear(out, "plc.l2", a, 1);
  return out;
}

const WeightTensor& PolicyWeights::at(const std::string& name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw std::out_of_range("policy has no tensor " + name);
  return it->second;
}

long PolicyWeights::parameter_count() const {
  long n = 0;
  for (const auto& [name, t] : tensors) n += static_cast<long>(t.data.size());
  return n;
}

std::string PolicyWeights::to_bytes() const {
  MsgpackWriter w;
  w.map(9);
  w.str("format"); w.str(kFormat);
  w.str("v"); w.uint(kFormatVersion);
  w.str("hidden"); w.sint(config.hidden);
  w.str("head"); w.sint(config.head);
  w.str("state"); w.sint(config.state);
  w.str("steps"); w.sint(config.steps);
  w.str("ablation"); w.str(to_string(config.ablation));
  w.str("devices"); w.sint(config.devices);
  w.str("tensors");
  w.map(static_cast<std::uint32_t>(tensors.size()));
  for (const auto& [name, t] : tensors) {
    w.str(name);
    w.array(2);
    w.array(static_cast<std::uint32_t>(t.shape.size()));
    for (std::int64_t s : t.shape) w.sint(s);
    // float32 as stored in memory: every machine we run on is little-endian x86-64 / aarch64.
    w.bin(std::string_view(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float)));
  }
  return w.take();
}

Result<PolicyWeights> PolicyWeights::from_bytes(const std::string& bytes, const std::string& source) {
  auto fail = [&](const std::string& what) { return make_error(source + ": " + what); };
  MsgpackReader in(bytes);
  std::uint32_t fields = 0;
  if (!in.map(fields)) return fail("not a gantry policy (no MessagePack map)");
  PolicyWeights out;
  bool format_seen = false;
  for (std::uint32_t i = 0; i < fields; ++i) {
    std::string_view key;
    if (!in.str(key)) return fail("a field name is not a string");
    auto get_int = [&](int& value) {
      std::int64_t v = 0;
      if (!in.sint(v) || v < 0 || v > (1 << 20)) return false;
      value = static_cast<int>(v);
      return true;
    };
    if (key == "format") {
      std::string_view f;
      if (!in.str(f) || f != kFormat) return fail("not a gantry policy (format is not \"gantry-policy\")");
      format_seen = true;
    } else if (key == "v") {
      std::uint64_t v = 0;
      if (!in.uint(v) || v != kFormatVersion)
        return fail("policy format version " + std::to_string(v) + " is not " + std::to_string(kFormatVersion) +
                    (v < kFormatVersion ? " (an older gantry wrote it: train it again)" : " (a newer gantry wrote it)"));
    } else if (key == "hidden" || key == "head" || key == "state" || key == "steps" || key == "devices") {
      int& field = key == "hidden" ? out.config.hidden
                   : key == "head" ? out.config.head
                   : key == "state" ? out.config.state
                   : key == "steps" ? out.config.steps
                                    : out.config.devices;
      if (!get_int(field)) return fail("field \"" + std::string(key) + "\" is not a small non-negative integer");
    } else if (key == "ablation") {
      std::string_view name;
      std::optional<Ablation> a;
      if (!in.str(name) || !(a = parse_ablation(std::string(name)))) return fail("unknown ablation");
      out.config.ablation = *a;
    } else if (key == "tensors") {
      std::uint32_t count = 0;
      if (!in.map(count)) return fail("field \"tensors\" is not a map");
      for (std::uint32_t t = 0; t < count; ++t) {
        std::string_view name, raw;
        std::uint32_t two = 0, dims = 0;
        if (!in.str(name) || !in.array(two) || two != 2 || !in.array(dims) || dims > 8)
          return fail("tensor " + std::to_string(t) + " is malformed");
        WeightTensor tensor;
        for (std::uint32_t k = 0; k < dims; ++k) {
          std::int64_t s = 0;
          if (!in.sint(s) || s < 0 || s > (1 << 24)) return fail("tensor " + std::string(name) + " has a bad shape");
          tensor.shape.push_back(s);
        }
        const std::int64_t count = elements(tensor.shape);
        if (count < 0 || !in.bin(raw) || raw.size() != static_cast<std::size_t>(count) * sizeof(float))
          return fail("tensor " + std::string(name) + " has " + std::to_string(raw.size()) +
                      " bytes, not one float32 per element of its shape");
        tensor.data.resize(raw.size() / sizeof(float));
        if (!raw.empty()) std::memcpy(tensor.data.data(), raw.data(), raw.size());
        out.tensors[std::string(name)] = std::move(tensor);
      }
    } else if (!in.skip()) {
      return fail("field \"" + std::string(key) + "\" is truncated");
    }
  }
  if (!format_seen) return fail("not a gantry policy (no format field)");
  for (int width : {out.config.hidden, out.config.head, out.config.state})
    if (width < 1 || width > kMaxWidth) return fail("layer widths must be in 1.." + std::to_string(kMaxWidth));
  if (out.config.ablation == Ablation::gdp && out.config.devices < 1)
    return fail("a gdp policy needs its device count");
  for (const TensorShape& expected : policy_layout(out.config)) {
    auto it = out.tensors.find(expected.name);
    if (it == out.tensors.end()) return fail("tensor " + expected.name + " is missing");
    if (it->second.shape != expected.shape) return fail("tensor " + expected.name + " has the wrong shape");
  }
  return out;
}

}  // namespace gantry
