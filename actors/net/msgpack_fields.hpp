#pragma once
// Messages and task bodies as MessagePack maps of named fields, written and read in place
// (core/msgpack.hpp): `put` and `entry` write values and fields; `read_object` reads a map whose
// fields may come in any order, each exactly once, steps over fields it does not know (a newer
// writer's) and names the field in every error ("assign.batch: field \"seed\" is missing").
#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.hpp"
#include "core/fingerprint.hpp"
#include "core/msgpack.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"

namespace gantry::wire {

// ---- writing ----------------------------------------------------------------------------------------

using Writer = MsgpackWriter;

inline void put(Writer& w, const std::string& v) { w.str(v); }
inline void put(Writer& w, double v) { w.real(v); }
inline void put(Writer& w, long v) { w.sint(v); }
inline void put(Writer& w, int v) { w.sint(v); }
inline void put(Writer& w, std::uint64_t v) { w.uint(v); }
inline void put(Writer& w, bool v) { w.boolean(v); }
inline void put(Writer& w, const Fingerprint& v) { w.str(v.hex()); }
inline void put(Writer& w, const Placement& p) {
  w.map(2);
  w.str("device");
  w.array(static_cast<std::uint32_t>(p.device.size()));
  for (std::int32_t d : p.device) w.sint(d);
  w.str("priority");
  w.array(static_cast<std::uint32_t>(p.priority.size()));
  for (double x : p.priority) w.real(x);
}

inline void put(Writer& w, const std::vector<std::string>& list) {
  w.array(static_cast<std::uint32_t>(list.size()));
  for (const std::string& item : list) w.str(item);
}

inline void put(Writer& w, const std::vector<double>& list) {
  w.array(static_cast<std::uint32_t>(list.size()));
  for (double x : list) w.real(x);
}

// A map's entry: a name and its value.
template <class T>
void entry(Writer& w, const char* name, const T& value) {
  w.str(name);
  put(w, value);
}

// ---- reading: a missing, mistyped or invalid field is an error naming it -----------------------------

// What is wrong with a value just read: nothing (nullptr), or `kNested` when a nested object has
// already named its own problem, or a phrase ("has the wrong type").
inline const char* const kNested = "";
inline const char* const kWrongType = "has the wrong type";

struct Decoder {
  MsgpackReader in;
  std::string error;  // the first problem, with the path of its field
};

inline const char* get(Decoder& d, std::string& out) {
  std::string_view v;
  if (!d.in.str(v)) return kWrongType;
  out.assign(v.data(), v.size());
  return nullptr;
}
inline const char* get(Decoder& d, double& out) {
  if (!d.in.real(out)) return kWrongType;
  return std::isfinite(out) ? nullptr : "is not finite";
}
// A length of time in seconds: 0 to a year (a worker's claim of -1e300 s of work went into the
// pool's counters as read).
inline const char* get_seconds(Decoder& d, double& out) {
  if (const char* wrong = get(d, out)) return wrong;
  return out >= 0 && out <= kLongestWait ? nullptr : "is not a time in seconds (0 to a year)";
}
template <class Int>
const char* get_int(Decoder& d, Int& out) {
  std::int64_t v = 0;
  if (!d.in.sint(v)) return kWrongType;
  if (v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max()) return "is out of range";
  out = static_cast<Int>(v);
  return nullptr;
}
inline const char* get(Decoder& d, long& out) { return get_int(d, out); }
inline const char* get(Decoder& d, int& out) { return get_int(d, out); }
inline const char* get(Decoder& d, std::uint64_t& out) { return d.in.uint(out) ? nullptr : kWrongType; }
inline const char* get(Decoder& d, bool& out) { return d.in.boolean(out) ? nullptr : kWrongType; }
inline const char* get(Decoder& d, Fingerprint& out) {
  std::string_view v;
  if (!d.in.str(v)) return kWrongType;
  return Fingerprint::from_hex(std::string(v), out) ? nullptr : "is not a fingerprint";
}

// Reads a map whose fields are `names`, in any order, each at most once: `field(name)` reads the
// value of one. The first `required` names must be there (all by default); the others are fields
// an older writer did not have, or that only some values carry. Fields of other names (from a
// newer writer) are stepped over.
template <std::size_t N, class Field>
bool read_object(Decoder& d, const std::string& what, const char* const (&names)[N], Field field, std::size_t required = N) {
  std::uint32_t entries = 0;
  if (!d.in.map(entries)) {
    d.error = what + ": not a map";
    return false;
  }
  std::bitset<N> seen;
  for (std::uint32_t e = 0; e < entries; ++e) {
    std::string_view key;
    if (!d.in.str(key)) {
      d.error = what + ": a key is not a string";
      return false;
    }
    std::size_t k = 0;
    while (k < N && key != names[k]) ++k;
    if (k == N) {
      if (d.in.skip()) continue;
      d.error = what + ": field \"" + std::string(key) + "\" is malformed";
      return false;
    }
    if (seen[k]) {
      d.error = what + ": field \"" + names[k] + "\" appears twice";
      return false;
    }
    seen[k] = true;
    if (const char* problem = field(key)) {
      if (problem != kNested) d.error = what + ": field \"" + names[k] + "\" " + problem;
      return false;
    }
  }
  for (std::size_t k = 0; k < std::min(required, N); ++k)
    if (!seen[k]) {
      d.error = what + ": field \"" + names[k] + "\" is missing";
      return false;
    }
  return true;
}

// A nested object's reader as a field's value: its own errors carry its path.
template <class Read>
const char* nested(Decoder& d, Read read) {
  return read() ? nullptr : kNested;
}

// The most elements reserved ahead of reading them.
inline constexpr std::uint32_t kReserveAtMost = 1u << 16;

// Reads an array element by element, `one(element)` saying what is wrong with each. The vector
// grows as elements are read, never sized from the count alone: a peer's count is a claim.
template <class T, class One>
const char* get_list(Decoder& d, std::vector<T>& out, One one) {
  std::uint32_t n = 0;
  if (!d.in.array(n)) return kWrongType;
  out.clear();
  out.reserve(std::min<std::uint32_t>(n, kReserveAtMost));
  for (std::uint32_t i = 0; i < n; ++i) {
    T item{};
    if (const char* problem = one(item)) return problem;
    out.push_back(std::move(item));
  }
  return nullptr;
}

inline const char* get(Decoder& d, std::vector<std::string>& out) {
  return get_list(d, out, [&](std::string& s) { return get(d, s) ? "holds something that is not a string" : nullptr; });
}

inline const char* get(Decoder& d, std::vector<double>& out) {
  return get_list(d, out, [&](double& x) { return d.in.real(x) ? nullptr : "holds something that is not a number"; });
}

// Opaque bytes (a task's body).
inline const char* get_bin(Decoder& d, std::string& out) {
  std::string_view v;
  if (!d.in.bin(v)) return kWrongType;
  out.assign(v.data(), v.size());
  return nullptr;
}

inline const char* const kPlacementFields[] = {"device", "priority"};
inline bool read_placement(Decoder& d, const std::string& what, Placement& p) {
  return read_object(d, what, kPlacementFields, [&](std::string_view key) -> const char* {
    if (key == "device")
      return get_list(d, p.device, [&](std::int32_t& device) -> const char* {
        std::int64_t v = 0;
        if (!d.in.sint(v) || v < 0 || v > (1 << 30)) return "holds something that is not a device index";
        device = static_cast<std::int32_t>(v);
        return nullptr;
      });
    return get_list(d, p.priority, [&](double& x) { return d.in.real(x) ? nullptr : "holds something that is not a number"; });
  });
}
inline const char* get(Decoder& d, Placement& out, const std::string& what) {
  return nested(d, [&] { return read_placement(d, what, out); });
}

// Reads one value of `bytes` with `read(decoder, what, out)`: the value, or the error naming its field.
template <class T, class Read>
Result<T> read_value(std::string_view bytes, const std::string& what, Read read) {
  Decoder d{MsgpackReader(bytes), {}};
  T out;
  if (!read(d, what, out)) return make_error(d.error);
  return out;
}

// A task body: one map of `names`, each field read by `field(decoder, out, name)`.
template <class T, std::size_t N, class Field>
Result<T> read_body(std::string_view body, const std::string& what, const char* const (&names)[N], Field field) {
  return read_value<T>(body, what, [&](Decoder& d, const std::string& path, T& out) {
    return read_object(d, path, names, [&](std::string_view key) { return field(d, out, key); });
  });
}

}  // namespace gantry::wire
