#include "storage/codec.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/hex.hpp"

namespace gantry::codec {

using nlohmann::json;

// ---- keys ------------------------------------------------------------------------------------------

void append_u64(std::string& out, std::uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}

void append_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}

std::uint64_t read_u64(const char* bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

std::uint32_t read_u32(const char* bytes) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

std::string fingerprint_key(const Fingerprint& fp) {
  std::string key;
  key.reserve(kFingerprintKeySize);
  append_u64(key, fp.hi);
  append_u64(key, fp.lo);
  return key;
}

Result<Fingerprint> parse_fingerprint_key(std::string_view key) {
  if (key.size() != kFingerprintKeySize)
    return make_error("key " + hex_encode(key) + " has " + std::to_string(key.size()) +
                      " bytes, expected a 16-byte fingerprint");
  return Fingerprint{read_u64(key.data()), read_u64(key.data() + 8)};
}

std::string schedule_key(const Fingerprint& graph, const Fingerprint& cluster) {
  std::string key;
  key.reserve(kHistoryKeySize);
  append_u64(key, graph.hi);
  append_u64(key, graph.lo);
  append_u64(key, cluster.hi);
  append_u64(key, cluster.lo);
  return key;
}

Result<std::pair<Fingerprint, Fingerprint>> parse_schedule_key(std::string_view key) {
  if (key.size() != kScheduleKeySize)
    return make_error("key " + hex_encode(key) + " has " + std::to_string(key.size()) +
                      " bytes, expected graph fingerprint | cluster fingerprint (32 bytes)");
  return std::make_pair(Fingerprint{read_u64(key.data()), read_u64(key.data() + 8)},
                        Fingerprint{read_u64(key.data() + 16), read_u64(key.data() + 24)});
}

std::string history_key(const HistoryKey& k) {
  std::string key = schedule_key(k.graph, k.cluster);
  append_u64(key, k.micros);
  append_u32(key, k.sequence);
  return key;
}

Result<HistoryKey> parse_history_key(std::string_view key) {
  if (key.size() != kHistoryKeySize)
    return make_error("key " + hex_encode(key) + " has " + std::to_string(key.size()) +
                      " bytes, expected graph | cluster | time | sequence (44 bytes)");
  HistoryKey k;
  k.graph = {read_u64(key.data()), read_u64(key.data() + 8)};
  k.cluster = {read_u64(key.data() + 16), read_u64(key.data() + 24)};
  k.micros = read_u64(key.data() + 32);
  k.sequence = read_u32(key.data() + 40);
  return k;
}

std::string episode_prefix(const std::string& job_id) {
  std::string key = job_id;
  key.push_back('\0');
  return key;
}

std::string episode_key(const std::string& job_id, std::uint64_t sequence) {
  std::string key = episode_prefix(job_id);
  append_u64(key, sequence);
  return key;
}

Result<std::pair<std::string, std::uint64_t>> parse_episode_key(std::string_view key) {
  auto nul = key.find('\0');
  if (nul == std::string_view::npos || key.size() - nul - 1 != 8)
    return make_error("key " + hex_encode(key) + " is not job id | NUL | 8-byte sequence");
  return std::make_pair(std::string(key.substr(0, nul)), read_u64(key.data() + nul + 1));
}

// Policies are keyed like episodes: name | NUL | big-endian version, so a name's versions sort.
std::string policy_prefix(const std::string& name) { return episode_prefix(name); }
std::string policy_key(const std::string& name, std::uint64_t version) { return episode_key(name, version); }
Result<std::pair<std::string, std::uint64_t>> parse_policy_key(std::string_view key) {
  auto k = parse_episode_key(key);
  if (!k) return make_error("key " + hex_encode(key) + " is not policy name | NUL | 8-byte version");
  return k;
}

Result<Fingerprint> parse_fingerprint_hex(const std::string& hex) {
  if (hex.size() != 32) return make_error("fingerprint '" + hex + "' does not have 32 hex digits");
  Fingerprint fp;
  if (!Fingerprint::from_hex(hex, fp)) return make_error("fingerprint '" + hex + "' has a non-hex character");
  return fp;
}

// ---- values ----------------------------------------------------------------------------------------

namespace {

std::string to_bytes(const json& j) {
  std::vector<std::uint8_t> bytes = json::to_msgpack(j);
  return std::string(bytes.begin(), bytes.end());
}

std::string newer_schema_message(const std::string& what, std::int64_t version) {
  return what + " written by schema version " + std::to_string(version) + ", this gantry reads up to " +
         std::to_string(kVersion) + "; upgrade gantry";
}

// Parses the bytes as a MessagePack map and reads its "v" without judging it.
Result<json> parse_map(std::string_view bytes, const std::string& family, std::int64_t* version) {
  json j;
  try {
    j = json::from_msgpack(bytes.data(), bytes.data() + bytes.size(), /*strict=*/true,
                           /*allow_exceptions=*/false);
  } catch (const std::exception& e) {  // allow_exceptions=false should make this unreachable
    return make_error(family + " value is not valid MessagePack: " + e.what());
  }
  if (j.is_discarded())
    return make_error(family + " value is not valid MessagePack (" + std::to_string(bytes.size()) + " bytes)");
  if (!j.is_object()) return make_error(family + " value is MessagePack but not a map");
  auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer())
    return make_error(family + " value has no integer schema version field 'v'");
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    return make_error(family + " value has an out-of-range schema version");
  *version = v->get<std::int64_t>();
  if (*version < 1) return make_error(family + " value has invalid schema version " + std::to_string(*version));
  return j;
}

// Parses and rejects values of a newer schema.
Result<json> parse_record(std::string_view bytes, const std::string& family) {
  std::int64_t version = 0;
  auto j = parse_map(bytes, family, &version);
  if (!j) return j;
  if (version > kVersion) return make_error(newer_schema_message(family + " value", version));
  return j;
}

// Reads typed fields of a decoded map; remembers the first problem.
class Fields {
 public:
  Fields(const json& j, std::string family) : j_(j), family_(std::move(family)) {}

  void text(const char* key, std::string& out, bool required = false) {
    const json* v = find(key, required);
    if (!v) return;
    if (!v->is_string()) return fail(key, "is not a string");
    out = v->get<std::string>();
  }
  void binary(const char* key, std::string& out, bool required = false) {
    const json* v = find(key, required);
    if (!v) return;
    if (!v->is_binary()) return fail(key, "is not a byte string");
    out.assign(v->get_binary().begin(), v->get_binary().end());
  }
  void number(const char* key, double& out, bool required = false) {
    const json* v = find(key, required);
    if (!v) return;
    if (!v->is_number()) return fail(key, "is not a number");
    out = v->get<double>();
  }
  template <class Int>
  void integer(const char* key, Int& out, bool required = false) {
    const json* v = find(key, required);
    if (!v) return;
    if (!v->is_number_integer()) return fail(key, "is not an integer");
    if (v->is_number_unsigned()) {
      auto u = v->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) return fail(key, "is out of range");
      out = static_cast<Int>(u);
    } else {
      auto s = v->get<std::int64_t>();
      if (s < static_cast<std::int64_t>(std::numeric_limits<Int>::min()) ||
          (s > 0 && static_cast<std::uint64_t>(s) > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())))
        return fail(key, "is out of range");
      out = static_cast<Int>(s);
    }
  }
  void fingerprint(const char* key, Fingerprint& out) {
    std::string hex;
    text(key, hex, /*required=*/true);
    if (!ok()) return;
    auto fp = parse_fingerprint_hex(hex);
    if (!fp) return fail(key, "is not a fingerprint: " + fp.error().message);
    out = fp.value();
  }
  void placement(const char* key, Placement& out) {
    const json* v = find(key, /*required=*/true);
    if (!v) return;
    if (!v->is_array()) return fail(key, "is not an array");
    out.device.clear();
    for (const auto& d : *v) {
      if (!d.is_number_integer()) return fail(key, "has a non-integer device index");
      bool in_range = d.is_number_unsigned() ? d.get<std::uint64_t>() <=
                                                   static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())
                                             : d.get<std::int64_t>() >= std::numeric_limits<std::int32_t>::min() &&
                                                   d.get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max();
      if (!in_range) return fail(key, "has an out-of-range device index");
      std::int64_t index = d.get<std::int64_t>();
      out.device.push_back(static_cast<std::int32_t>(index));
    }
    const json* p = find("priority", /*required=*/false);
    out.priority.clear();
    if (!p) return;
    if (!p->is_array()) return fail("priority", "is not an array");
    for (const auto& x : *p) {
      if (!x.is_number()) return fail("priority", "has a non-number entry");
      out.priority.push_back(x.get<double>());
    }
  }

  bool ok() const { return error_.empty(); }
  Error error() const { return make_error(error_); }

 private:
  const json* find(const char* key, bool required) {
    if (!ok()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) fail(key, "is missing");
      return nullptr;
    }
    return &*it;
  }
  void fail(const char* key, const std::string& what) {
    if (ok()) error_ = family_ + " value: field '" + key + "' " + what;
  }

  const json& j_;
  std::string family_;
  std::string error_;
};

}  // namespace

std::string encode(const ScheduleRecord& r) {
  json j;
  j["v"] = kVersion;
  j["graph"] = r.graph.hex();
  j["cluster"] = r.cluster.hex();
  j["graph_label"] = r.graph_label;
  j["cluster_name"] = r.cluster_name;
  j["method"] = r.method;
  j["sim"] = r.sim;
  j["unit"] = r.unit;
  j["makespan"] = r.makespan;
  j["lower_bound"] = r.lower_bound;
  j["placement"] = r.placement.device;
  if (r.placement.has_priority()) j["priority"] = r.placement.priority;
  j["job_id"] = r.job_id;
  j["found_at"] = r.found_at;
  j["evaluations"] = static_cast<std::int64_t>(r.evaluations);
  j["model_version"] = r.model_version;
  if (!r.sim_options.empty()) j["sim_options"] = r.sim_options;
  if (!r.scheme.empty()) j["scheme"] = r.scheme;
  if (!r.candidate.empty()) j["candidate"] = r.candidate;
  if (r.measured_runs > 0) {
    j["measured"] = r.measured;
    j["measured_at"] = r.measured_at;
    j["measured_runs"] = r.measured_runs;
    j["measured_backend"] = r.measured_backend;
  }
  return to_bytes(j);
}

Result<ScheduleRecord> decode_schedule(std::string_view bytes) {
  auto j = parse_record(bytes, "schedules");
  if (!j) return j.error();
  Fields f(j.value(), "schedules");
  ScheduleRecord r;
  f.fingerprint("graph", r.graph);
  f.fingerprint("cluster", r.cluster);
  f.text("graph_label", r.graph_label);
  f.text("cluster_name", r.cluster_name);
  f.text("method", r.method);
  f.text("sim", r.sim);
  f.text("unit", r.unit);
  f.number("makespan", r.makespan, /*required=*/true);
  f.number("lower_bound", r.lower_bound);
  f.placement("placement", r.placement);
  f.text("job_id", r.job_id);
  f.number("found_at", r.found_at);
  f.integer("evaluations", r.evaluations);
  f.integer("model_version", r.model_version);  // absent: written before model versions (1)
  f.text("sim_options", r.sim_options);
  f.text("scheme", r.scheme);        // absent: a placement
  f.text("candidate", r.candidate);
  f.number("measured", r.measured);  // absent: never measured
  f.number("measured_at", r.measured_at);
  f.integer("measured_runs", r.measured_runs);
  f.text("measured_backend", r.measured_backend);
  if (!f.ok()) return f.error();
  if (r.model_version < 1) return make_error("schedules value: field 'model_version' must be >= 1");
  return r;
}

std::string encode(const HistoryRecord& r) {
  json j;
  j["v"] = kVersion;
  j["time"] = r.time;
  j["makespan"] = r.makespan;
  j["method"] = r.method;
  j["job_id"] = r.job_id;
  j["evaluations"] = static_cast<std::int64_t>(r.evaluations);
  return to_bytes(j);
}

Result<HistoryRecord> decode_history(std::string_view bytes) {
  auto j = parse_record(bytes, "history");
  if (!j) return j.error();
  Fields f(j.value(), "history");
  HistoryRecord r;
  f.number("time", r.time);
  f.number("makespan", r.makespan, /*required=*/true);
  f.text("method", r.method);
  f.text("job_id", r.job_id);
  f.integer("evaluations", r.evaluations);
  if (!f.ok()) return f.error();
  return r;
}

std::string encode(const EpisodeRecord& r) {
  json j;
  j["v"] = kVersion;
  j["job_id"] = r.job_id;
  j["sequence"] = r.sequence;
  j["rollout"] = r.rollout;
  j["candidates"] = static_cast<std::int64_t>(r.candidates);
  j["best_makespan"] = r.best_makespan;
  j["mean_makespan"] = r.mean_makespan;
  j["time"] = r.time;
  return to_bytes(j);
}

Result<EpisodeRecord> decode_episode(std::string_view bytes) {
  auto j = parse_record(bytes, "episodes");
  if (!j) return j.error();
  Fields f(j.value(), "episodes");
  EpisodeRecord r;
  f.text("job_id", r.job_id, /*required=*/true);
  f.integer("sequence", r.sequence, /*required=*/true);
  f.integer("rollout", r.rollout);
  f.integer("candidates", r.candidates);
  f.number("best_makespan", r.best_makespan);
  f.number("mean_makespan", r.mean_makespan);
  f.number("time", r.time);
  if (!f.ok()) return f.error();
  return r;
}

std::string encode(const JobRecord& r) {
  json j;
  j["v"] = kVersion;
  j["id"] = r.id;
  j["kind"] = r.kind;
  j["state"] = to_string(r.state);
  j["graph"] = r.graph.hex();
  j["cluster"] = r.cluster.hex();
  j["graph_label"] = r.graph_label;
  j["cluster_name"] = r.cluster_name;
  j["started"] = r.started;
  j["finished"] = r.finished;
  j["evaluations"] = static_cast<std::int64_t>(r.evaluations);
  j["best_makespan"] = r.best_makespan;
  j["message"] = r.message;
  if (r.owner_pid > 0) j["owner_pid"] = static_cast<std::int64_t>(r.owner_pid);
  if (!r.owner_host.empty()) j["owner_host"] = r.owner_host;
  if (!r.submit_key.empty()) j["submit_key"] = r.submit_key;
  if (!r.improves.empty()) j["improves"] = r.improves;
  // The spec is kept apart (the store's job_specs); a record written before that may hold it.
  return to_bytes(j);
}

Result<JobRecord> decode_job(std::string_view bytes) {
  auto j = parse_record(bytes, "jobs");
  if (!j) return j.error();
  Fields f(j.value(), "jobs");
  JobRecord r;
  std::string state;
  f.text("id", r.id, /*required=*/true);
  f.text("kind", r.kind);  // absent in records written before it existed: "tune"
  f.text("state", state, /*required=*/true);
  f.fingerprint("graph", r.graph);
  f.fingerprint("cluster", r.cluster);
  f.text("graph_label", r.graph_label);
  f.text("cluster_name", r.cluster_name);
  f.number("started", r.started);
  f.number("finished", r.finished);
  f.integer("evaluations", r.evaluations);
  f.number("best_makespan", r.best_makespan);
  f.text("message", r.message);
  f.integer("owner_pid", r.owner_pid);
  f.text("owner_host", r.owner_host);
  f.text("submit_key", r.submit_key);  // absent before submit keys, and for jobs without one
  f.text("improves", r.improves);      // background runs only
  f.text("spec", r.spec);
  if (!f.ok()) return f.error();
  auto parsed = parse_job_state(state);
  if (!parsed) return make_error("jobs value: field 'state' has unknown job state '" + state + "'");
  r.state = *parsed;
  return r;
}

std::string encode_text(const std::string& text) {
  json j;
  j["v"] = kVersion;
  j["text"] = text;
  return to_bytes(j);
}

Result<std::string> decode_text(std::string_view bytes, const std::string& family) {
  auto j = parse_record(bytes, family);
  if (!j) return j.error();
  Fields f(j.value(), family);
  std::string text;
  f.text("text", text, /*required=*/true);
  if (!f.ok()) return f.error();
  return text;
}

std::string encode_checkpoint(const std::string& bytes) {
  json j;
  j["v"] = kVersion;
  j["data"] = json::binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  return to_bytes(j);
}

Result<std::string> decode_checkpoint(std::string_view bytes) {
  auto j = parse_record(bytes, "checkpoints");
  if (!j) return j.error();
  Fields f(j.value(), "checkpoints");
  std::string data;
  f.binary("data", data, /*required=*/true);
  if (!f.ok()) return f.error();
  return data;
}

std::string encode_schema_version(int version) {
  json j;
  j["v"] = version;
  return to_bytes(j);
}

Result<int> decode_schema_version(std::string_view bytes) {
  std::int64_t version = 0;
  auto j = parse_map(bytes, "meta/schema_version", &version);
  if (!j) return j.error();
  return static_cast<int>(version);
}

std::string encode(const PolicyRecord& r) {
  json j;
  j["v"] = kVersion;
  j["name"] = r.name;
  j["version"] = r.version;
  j["weights"] = json::binary(std::vector<std::uint8_t>(r.weights.begin(), r.weights.end()));
  j["stage"] = r.stage;
  j["ablation"] = r.ablation;
  j["graphs"] = r.graphs;
  j["cluster_name"] = r.cluster_name;
  j["devices"] = r.devices;
  j["episodes"] = static_cast<std::int64_t>(r.episodes);
  j["seconds"] = r.seconds;
  j["best_ratio"] = r.best_ratio;
  j["greedy_ratio"] = r.greedy_ratio;
  j["parent"] = r.parent;
  j["created"] = r.created;
  j["job"] = r.job;
  j["curve"] = r.curve;
  return to_bytes(j);
}

std::string encode(const ProfileEntry& e) {
  json j = profile_entry_json(e);
  j["v"] = kVersion;
  return to_bytes(j);
}

std::string profile_key(const ProfileEntry& e) { return e.device_kind + "|" + e.op.signature; }

Result<ProfileEntry> decode_profile(std::string_view bytes) {
  auto j = parse_record(bytes, "profiles");
  if (!j) return j.error();
  return profile_entry_from_json(j.value(), "profiles value");
}

Result<PolicyRecord> decode_policy(std::string_view bytes) {
  auto j = parse_record(bytes, "policies");
  if (!j) return j.error();
  Fields f(j.value(), "policies");
  PolicyRecord r;
  f.text("name", r.name, /*required=*/true);
  f.integer("version", r.version, /*required=*/true);
  f.binary("weights", r.weights, /*required=*/true);
  f.text("stage", r.stage);
  f.text("ablation", r.ablation);
  f.text("graphs", r.graphs);
  f.text("cluster_name", r.cluster_name);
  f.integer("devices", r.devices);
  f.integer("episodes", r.episodes);
  f.number("seconds", r.seconds);
  f.number("best_ratio", r.best_ratio);
  f.number("greedy_ratio", r.greedy_ratio);
  f.text("parent", r.parent);
  f.number("created", r.created);
  f.text("job", r.job);
  f.text("curve", r.curve);
  if (!f.ok()) return f.error();
  return r;
}

Status check_value(std::string_view bytes, const std::string& family) {
  auto j = parse_record(bytes, family);
  if (!j) return j.error();
  return Ok{};
}

}  // namespace gantry::codec
