#include "actors/net/wire.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace gantry::wire {

using nlohmann::json;

const char* to_string(Type type) {
  switch (type) {
    case Type::hello: return "hello";
    case Type::heartbeat: return "heartbeat";
    case Type::assign: return "assign";
    case Type::done: return "done";
    case Type::need_problem: return "need_problem";
    case Type::problem: return "problem";
    case Type::submit: return "submit";
    case Type::status: return "status";
    case Type::cancel: return "cancel";
    case Type::jobs: return "jobs";
    case Type::reply: return "reply";
    case Type::bye: return "bye";
    case Type::query: return "query";
  }
  return "unknown";
}

Result<Type> parse_header(std::string_view version, std::string_view type) {
  if (version.size() != 1) return make_error("version frame has " + std::to_string(version.size()) + " bytes, expected 1");
  const auto v = static_cast<std::uint8_t>(version[0]);
  if (v != kProtocolVersion)
    return make_error("protocol version " + std::to_string(v) + ", this gantry speaks " + std::to_string(kProtocolVersion));
  if (type.size() != 1) return make_error("type frame has " + std::to_string(type.size()) + " bytes, expected 1");
  const auto t = static_cast<std::uint8_t>(type[0]);
  if (t == 0 || t > kLastType) return make_error("unknown message type " + std::to_string(t));
  return static_cast<Type>(t);
}

namespace {

// ---- field helpers: a missing or mistyped field is an error naming it -------------------------------

struct Reader {
  const json& j;
  std::string what;
  std::string error;

  const json* field(const char* name, json::value_t type) {
    if (!error.empty()) return nullptr;
    auto it = j.find(name);
    if (it == j.end()) {
      error = what + ": field \"" + name + "\" is missing";
      return nullptr;
    }
    const bool number = type == json::value_t::number_float;
    const bool integer = type == json::value_t::number_unsigned;
    if ((number && !it->is_number()) || (integer && !it->is_number_integer()) ||
        (!number && !integer && it->type() != type)) {
      error = what + ": field \"" + name + "\" has the wrong type";
      return nullptr;
    }
    return &*it;
  }
  void get(const char* name, std::string& out) {
    if (auto f = field(name, json::value_t::string)) out = f->get<std::string>();
  }
  void get(const char* name, double& out) {
    if (auto f = field(name, json::value_t::number_float)) {
      out = f->get<double>();
      if (!std::isfinite(out)) error = what + ": field \"" + name + "\" is not finite";
    }
  }
  template <class Int>
  void get_int(const char* name, Int& out) {
    if (auto f = field(name, json::value_t::number_unsigned)) out = f->get<Int>();
  }
  void get(const char* name, long& out) { get_int(name, out); }
  void get(const char* name, int& out) { get_int(name, out); }
  void get(const char* name, std::uint64_t& out) { get_int(name, out); }
  void get(const char* name, bool& out) {
    if (auto f = field(name, json::value_t::boolean)) out = f->get<bool>();
  }
  void get(const char* name, Fingerprint& out) {
    std::string hex;
    get(name, hex);
    if (error.empty() && !Fingerprint::from_hex(hex, out)) error = what + ": field \"" + name + "\" is not a fingerprint";
  }
  void get(const char* name, Placement& out) {
    const json* f = field(name, json::value_t::object);
    if (!f) return;
    Reader inner{*f, what + "." + name, {}};
    const json* devices = inner.field("device", json::value_t::array);
    const json* priority = inner.field("priority", json::value_t::array);
    if (!inner.error.empty()) {
      error = inner.error;
      return;
    }
    out.device.clear();
    out.priority.clear();
    for (const json& d : *devices) {
      if (!d.is_number_integer() || d.get<long long>() < 0 || d.get<long long>() > (1 << 30)) {
        error = what + "." + name + ".device: not a device index";
        return;
      }
      out.device.push_back(d.get<std::int32_t>());
    }
    for (const json& p : *priority) {
      if (!p.is_number()) {
        error = what + "." + name + ".priority: not a number";
        return;
      }
      out.priority.push_back(p.get<double>());
    }
  }
};

json placement_json(const Placement& p) { return json{{"device", p.device}, {"priority", p.priority}}; }

std::string pack(json j) {
  j["v"] = kSchemaVersion;
  std::vector<std::uint8_t> bytes = json::to_msgpack(j);
  return std::string(bytes.begin(), bytes.end());
}

Result<json> unpack(std::string_view payload, const char* what) {
  if (payload.size() > kMaxPayloadBytes)
    return make_error(std::string(what) + ": payload of " + std::to_string(payload.size()) + " bytes is over the limit");
  json j = json::from_msgpack(payload.begin(), payload.end(), true, false);
  if (j.is_discarded()) return make_error(std::string(what) + ": payload is not MessagePack (malformed or truncated)");
  if (!j.is_object()) return make_error(std::string(what) + ": payload is not a map");
  auto v = j.find("v");
  if (v == j.end() || !v->is_number_integer()) return make_error(std::string(what) + ": payload has no schema version");
  if (v->get<long long>() != kSchemaVersion)
    return make_error(std::string(what) + ": schema version " + std::to_string(v->get<long long>()) +
                      ", this gantry reads " + std::to_string(kSchemaVersion));
  return j;
}

template <class T, class Fill>
Result<T> read(std::string_view payload, const char* what, Fill fill) {
  auto j = unpack(payload, what);
  if (!j) return j.error();
  T out;
  Reader r{j.value(), what, {}};
  fill(r, out);
  if (!r.error.empty()) return make_error(r.error);
  return out;
}

json batch_json(const BatchRequest& b) {
  return json{{"problem", b.problem.hex()}, {"start", placement_json(b.start)}, {"seed", b.seed},
              {"evaluations", b.evaluations}, {"seconds", b.seconds}, {"t_start", b.t_start},
              {"t_end", b.t_end}, {"perturb", b.perturb}, {"sequence", b.sequence}, {"attempt", b.attempt},
              {"fail_times", b.fail_times}};
}

void read_batch(Reader& r, BatchRequest& b) {
  r.get("problem", b.problem);
  r.get("start", b.start);
  r.get("seed", b.seed);
  r.get("evaluations", b.evaluations);
  r.get("seconds", b.seconds);
  r.get("t_start", b.t_start);
  r.get("t_end", b.t_end);
  r.get("perturb", b.perturb);
  r.get("sequence", b.sequence);
  r.get("attempt", b.attempt);
  r.get("fail_times", b.fail_times);
}

json problem_json(const ProblemSpec& p) {
  return json{{"graph", p.graph_json}, {"cluster", p.cluster_yaml}, {"sim", p.sim_json}, {"label", p.graph_label}};
}

void read_problem(Reader& r, ProblemSpec& p) {
  r.get("graph", p.graph_json);
  r.get("cluster", p.cluster_yaml);
  r.get("sim", p.sim_json);
  r.get("label", p.graph_label);
}

json job_spec_json(const JobSpec& s) {
  return json{{"kind", s.kind},
              {"problem", problem_json(s.problem)},
              {"budget_seconds", s.budget_seconds},
              {"budget_evaluations", s.budget_evaluations},
              {"patience_seconds", s.patience_seconds},
              {"batch_seconds", s.batch_seconds},
              {"batch_evaluations", s.batch_evaluations},
              {"seed", s.seed},
              {"parallelism", s.parallelism},
              {"priority", s.priority},
              {"fail_batch", s.fail_batch},
              {"fail_times", s.fail_times}};
}

void read_job_spec(Reader& r, JobSpec& s) {
  r.get("kind", s.kind);
  if (const json* p = r.field("problem", json::value_t::object)) {
    Reader inner{*p, r.what + ".problem", {}};
    read_problem(inner, s.problem);
    if (!inner.error.empty()) r.error = inner.error;
  }
  r.get("budget_seconds", s.budget_seconds);
  r.get("budget_evaluations", s.budget_evaluations);
  r.get("patience_seconds", s.patience_seconds);
  r.get("batch_seconds", s.batch_seconds);
  r.get("batch_evaluations", s.batch_evaluations);
  r.get("seed", s.seed);
  r.get("parallelism", s.parallelism);
  r.get("priority", s.priority);
  r.get("fail_batch", s.fail_batch);
  r.get("fail_times", s.fail_times);
}

}  // namespace

std::string encode(const Hello& m) {
  return pack(json{{"name", m.name}, {"host", m.host}, {"pid", m.pid}, {"slots", m.slots}});
}
template <>
Result<Hello> decode<Hello>(std::string_view payload) {
  return read<Hello>(payload, "hello", [](Reader& r, Hello& m) {
    r.get("name", m.name);
    r.get("host", m.host);
    r.get("pid", m.pid);
    r.get("slots", m.slots);
    if (r.error.empty() && (m.slots < 0 || m.slots > 4096)) r.error = "hello: slots " + std::to_string(m.slots) + " out of range";
  });
}

std::string encode(const Assign& m) {
  return pack(json{{"lease", m.lease}, {"deadline_seconds", m.deadline_seconds}, {"batch", batch_json(m.batch)}});
}
template <>
Result<Assign> decode<Assign>(std::string_view payload) {
  return read<Assign>(payload, "assign", [](Reader& r, Assign& m) {
    r.get("lease", m.lease);
    r.get("deadline_seconds", m.deadline_seconds);
    if (const json* b = r.field("batch", json::value_t::object)) {
      Reader inner{*b, "assign.batch", {}};
      read_batch(inner, m.batch);
      if (!inner.error.empty()) r.error = inner.error;
    }
  });
}

std::string encode(const Done& m) {
  const BatchResult& b = m.result;
  return pack(json{{"lease", m.lease},
                   {"sequence", b.sequence},
                   {"evaluations", b.evaluations},
                   {"best_makespan", b.best_makespan},
                   {"mean_makespan", b.mean_makespan},
                   {"best", placement_json(b.best)},
                   {"last", placement_json(b.last)},
                   {"worker", b.worker},
                   {"error", b.error}});
}
template <>
Result<Done> decode<Done>(std::string_view payload) {
  return read<Done>(payload, "done", [](Reader& r, Done& m) {
    BatchResult& b = m.result;
    r.get("lease", m.lease);
    r.get("sequence", b.sequence);
    r.get("evaluations", b.evaluations);
    r.get("best_makespan", b.best_makespan);
    r.get("mean_makespan", b.mean_makespan);
    r.get("best", b.best);
    r.get("last", b.last);
    r.get("worker", b.worker);
    r.get("error", b.error);
    if (r.error.empty() && b.evaluations < 0) r.error = "done: negative evaluations";
  });
}

std::string encode(const NeedProblem& m) { return pack(json{{"key", m.key.hex()}}); }
template <>
Result<NeedProblem> decode<NeedProblem>(std::string_view payload) {
  return read<NeedProblem>(payload, "need_problem", [](Reader& r, NeedProblem& m) { r.get("key", m.key); });
}

std::string encode(const ProblemContent& m) {
  return pack(json{{"key", m.key.hex()}, {"spec", problem_json(m.spec)}});
}
template <>
Result<ProblemContent> decode<ProblemContent>(std::string_view payload) {
  return read<ProblemContent>(payload, "problem", [](Reader& r, ProblemContent& m) {
    r.get("key", m.key);
    if (const json* s = r.field("spec", json::value_t::object)) {
      Reader inner{*s, "problem.spec", {}};
      read_problem(inner, m.spec);
      if (!inner.error.empty()) r.error = inner.error;
    }
  });
}

std::string encode(const Request& m) {
  return pack(json{{"id", m.id}, {"job", m.job}, {"spec", job_spec_json(m.spec)}, {"graph", m.graph.hex()},
                   {"runtime", m.runtime.hex()}});
}
template <>
Result<Request> decode<Request>(std::string_view payload) {
  return read<Request>(payload, "request", [](Reader& r, Request& m) {
    r.get("id", m.id);
    r.get("job", m.job);
    if (const json* s = r.field("spec", json::value_t::object)) {
      Reader inner{*s, "request.spec", {}};
      read_job_spec(inner, m.spec);
      if (!inner.error.empty()) r.error = inner.error;
    }
    r.get("graph", m.graph);
    r.get("runtime", m.runtime);
  });
}

std::string encode(const Reply& m) {
  return pack(json{{"id", m.id}, {"ok", m.ok}, {"error", m.error}, {"data", m.data}});
}
template <>
Result<Reply> decode<Reply>(std::string_view payload) {
  return read<Reply>(payload, "reply", [](Reader& r, Reply& m) {
    r.get("id", m.id);
    r.get("ok", m.ok);
    r.get("error", m.error);
    r.get("data", m.data);
  });
}

std::string encode_empty() { return pack(json::object()); }

std::string job_spec_text(const JobSpec& spec) { return job_spec_json(spec).dump(); }

std::string schedule_record_json(const ScheduleRecord& r) {
  return json{{"graph", r.graph.hex()}, {"cluster", r.cluster.hex()}, {"graph_label", r.graph_label},
              {"cluster_name", r.cluster_name}, {"method", r.method}, {"sim", r.sim}, {"unit", r.unit},
              {"makespan", r.makespan}, {"lower_bound", r.lower_bound}, {"placement", placement_json(r.placement)},
              {"job_id", r.job_id}, {"found_at", r.found_at}, {"evaluations", r.evaluations},
              {"model_version", r.model_version}, {"sim_options", r.sim_options}}
      .dump();
}

Result<ScheduleRecord> schedule_record_from_json(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("stored best: not a JSON object");
  ScheduleRecord r;
  Reader f{j, "stored best", {}};
  f.get("graph", r.graph);
  f.get("cluster", r.cluster);
  f.get("graph_label", r.graph_label);
  f.get("cluster_name", r.cluster_name);
  f.get("method", r.method);
  f.get("sim", r.sim);
  f.get("unit", r.unit);
  f.get("makespan", r.makespan);
  f.get("lower_bound", r.lower_bound);
  f.get("placement", r.placement);
  f.get("job_id", r.job_id);
  f.get("found_at", r.found_at);
  f.get("evaluations", r.evaluations);
  f.get("model_version", r.model_version);
  f.get("sim_options", r.sim_options);
  if (!f.error.empty()) return make_error(f.error);
  return r;
}

Result<JobSpec> parse_job_spec_text(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("stored job spec: not a JSON object");
  JobSpec spec;
  Reader r{j, "stored job spec", {}};
  read_job_spec(r, spec);
  if (!r.error.empty()) return make_error(r.error);
  return spec;
}

std::string job_records_json(const std::vector<JobRecord>& jobs) {
  json list = json::array();
  for (const JobRecord& j : jobs)
    list.push_back(json{{"id", j.id}, {"state", to_string(j.state)}, {"graph", j.graph.hex()},
                        {"cluster", j.cluster.hex()}, {"graph_label", j.graph_label},
                        {"cluster_name", j.cluster_name}, {"started", j.started}, {"finished", j.finished},
                        {"evaluations", j.evaluations}, {"best_makespan", j.best_makespan},
                        {"message", j.message}, {"owner_pid", j.owner_pid}, {"owner_host", j.owner_host}});
  return list.dump();
}

Result<std::vector<JobRecord>> job_records_from_json(const std::string& text) {
  json list = json::parse(text, nullptr, false);
  if (list.is_discarded() || !list.is_array()) return make_error("job records: not a JSON list");
  std::vector<JobRecord> jobs;
  for (const json& item : list) {
    if (!item.is_object()) return make_error("job records: an entry is not an object");
    JobRecord j;
    Reader r{item, "job record", {}};
    std::string state;
    r.get("id", j.id);
    r.get("state", state);
    r.get("graph", j.graph);
    r.get("cluster", j.cluster);
    r.get("graph_label", j.graph_label);
    r.get("cluster_name", j.cluster_name);
    r.get("started", j.started);
    r.get("finished", j.finished);
    r.get("evaluations", j.evaluations);
    r.get("best_makespan", j.best_makespan);
    r.get("message", j.message);
    r.get("owner_pid", j.owner_pid);
    r.get("owner_host", j.owner_host);
    if (!r.error.empty()) return make_error(r.error);
    auto parsed = parse_job_state(state);
    if (!parsed) return make_error("job record " + j.id + ": unknown state " + state);
    j.state = *parsed;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace gantry::wire
