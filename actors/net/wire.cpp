#include "actors/net/wire.hpp"

#include <nlohmann/json.hpp>

#include "actors/net/msgpack_fields.hpp"
#include "core/hex.hpp"
#include "core/json_util.hpp"

namespace gantry::wire {

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

void put(Writer& w, const RolloutTask& t);
void put(Writer& w, const ProblemSpec& p);
void put(Writer& w, const JobSpec& s);
void put(Writer& w, const TrainSpec& t);

// A message: a map with the schema version first, then `entries` more written by `fill`.
template <class Fill>
std::string message(std::uint32_t entries, Fill fill) {
  Writer w;
  w.map(entries + 1);
  entry(w, "v", kSchemaVersion);
  fill(w);
  return w.take();
}

void put(Writer& w, const RolloutTask& t) {
  w.map(6);
  entry(w, "kind", t.kind);
  entry(w, "problem", t.problem);
  w.str("body");
  w.bin(t.body);
  entry(w, "seconds", t.seconds);
  entry(w, "sequence", t.sequence);
  entry(w, "attempt", t.attempt);
}

void put(Writer& w, const ProblemSpec& p) {
  const bool profiled = !p.profiles_json.empty();
  w.map(4 + (p.is_pipeline() ? 1 : 0) + (profiled ? 1 : 0));
  entry(w, "graph", p.graph_json);
  entry(w, "cluster", p.cluster_yaml);
  entry(w, "sim", p.sim_json);
  entry(w, "label", p.graph_label);
  if (p.is_pipeline()) entry(w, "pipeline", p.pipeline_json);
  if (profiled) entry(w, "profiles", p.profiles_json);
}

void put(Writer& w, const JobSpec& s) {
  const bool train = s.kind == "train";  // the learner's settings travel with learner jobs only
  const bool pipeline = s.kind == "pipeline";  // and the co-tuner's with pipeline jobs
  const bool measure = s.kind == "measure";    // and what to measure with measurement jobs
  w.map(train || pipeline || measure ? 13 : 12);
  entry(w, "kind", s.kind);
  w.str("problem");
  put(w, s.problem);
  entry(w, "budget_seconds", s.budget_seconds);
  entry(w, "budget_evaluations", s.budget_evaluations);
  entry(w, "patience_seconds", s.patience_seconds);
  entry(w, "batch_seconds", s.batch_seconds);
  entry(w, "batch_evaluations", s.batch_evaluations);
  entry(w, "seed", s.seed);
  entry(w, "parallelism", s.parallelism);
  entry(w, "priority", s.priority);
  entry(w, "fail_batch", s.fail_batch);
  entry(w, "fail_times", s.fail_times);
  if (train) {
    w.str("train");
    put(w, s.train);
  }
  if (measure) {  // the measure task's own request (actors/measure_task.hpp)
    w.str("measure");
    put_measure_request(w, s.measure);
  }
  if (pipeline) {
    w.str("pipeline");
    w.map(5);
    entry(w, "max_chunks", s.pipeline.max_chunks);
    entry(w, "min_gain", s.pipeline.min_gain);
    entry(w, "max_passes", s.pipeline.max_passes);
    entry(w, "walk_share", s.pipeline.walk_share);
    entry(w, "kick_share", s.pipeline.kick_share);
  }
}

void put(Writer& w, const TrainSpec& t) {
  w.map(23);
  w.str("more_problems");
  w.array(static_cast<std::uint32_t>(t.more_problems.size()));
  for (const ProblemSpec& p : t.more_problems) put(w, p);
  entry(w, "stage", t.stage);
  entry(w, "episodes", t.episodes);
  entry(w, "il_share", t.il_share);
  entry(w, "name", t.name);
  entry(w, "init", t.init);
  entry(w, "init_hex", t.init_hex);
  entry(w, "init_label", t.init_label);
  entry(w, "ablation", t.ablation);
  entry(w, "hidden", t.hidden);
  entry(w, "head", t.head);
  entry(w, "state", t.state);
  entry(w, "steps", t.steps);
  entry(w, "batch", t.batch);
  entry(w, "graphs_per_update", t.graphs_per_update);
  entry(w, "learning_rate", t.learning_rate);
  entry(w, "entropy", t.entropy);
  entry(w, "epsilon", t.epsilon);
  entry(w, "imitate", t.imitate);
  entry(w, "max_staleness", t.max_staleness);
  entry(w, "stale", t.stale);
  entry(w, "progress_every", t.progress_every);
  entry(w, "measured_share", t.measured_share);
}

void put(Writer& w, const ScheduleRecord& r) {
  const bool measured = r.measured_runs > 0;
  // A pipeline best carries its scheme and candidate, a measured best its measurement.
  w.map(15 + (r.is_pipeline() ? 2 : 0) + (measured ? 4 : 0));
  entry(w, "graph", r.graph);
  entry(w, "cluster", r.cluster);
  entry(w, "graph_label", r.graph_label);
  entry(w, "cluster_name", r.cluster_name);
  entry(w, "method", r.method);
  entry(w, "sim", r.sim);
  entry(w, "unit", r.unit);
  entry(w, "makespan", r.makespan);
  entry(w, "lower_bound", r.lower_bound);
  entry(w, "placement", r.placement);
  entry(w, "job_id", r.job_id);
  entry(w, "found_at", r.found_at);
  entry(w, "evaluations", r.evaluations);
  entry(w, "model_version", r.model_version);
  entry(w, "sim_options", r.sim_options);
  if (r.is_pipeline()) {
    entry(w, "scheme", r.scheme);
    entry(w, "candidate", r.candidate);
  }
  if (measured) {
    entry(w, "measured", r.measured);
    entry(w, "measured_at", r.measured_at);
    entry(w, "measured_runs", r.measured_runs);
    entry(w, "measured_backend", r.measured_backend);
  }
}

void put(Writer& w, const HistoryRecord& h) {
  w.map(5);
  entry(w, "time", h.time);
  entry(w, "makespan", h.makespan);
  entry(w, "method", h.method);
  entry(w, "job_id", h.job_id);
  entry(w, "evaluations", h.evaluations);
}

void put(Writer& w, const JobRecord& j) {
  w.map(15);
  entry(w, "id", j.id);
  entry(w, "state", std::string(to_string(j.state)));
  entry(w, "graph", j.graph);
  entry(w, "cluster", j.cluster);
  entry(w, "graph_label", j.graph_label);
  entry(w, "cluster_name", j.cluster_name);
  entry(w, "started", j.started);
  entry(w, "finished", j.finished);
  entry(w, "evaluations", j.evaluations);
  entry(w, "best_makespan", j.best_makespan);
  entry(w, "message", j.message);
  entry(w, "owner_pid", j.owner_pid);
  entry(w, "owner_host", j.owner_host);
  entry(w, "kind", j.kind);
  entry(w, "improves", j.improves);
}

const char* const kTaskFields[] = {"kind", "problem", "body", "seconds", "sequence", "attempt"};
bool read_task(Decoder& d, const std::string& what, RolloutTask& t) {
  return read_object(d, what, kTaskFields, [&](std::string_view key) -> const char* {
    if (key == "kind") return get(d, t.kind);
    if (key == "problem") return get(d, t.problem);
    if (key == "body") return get_bin(d, t.body);
    if (key == "seconds") return get_seconds(d, t.seconds);
    if (key == "sequence") return get(d, t.sequence);
    return get(d, t.attempt);
  });
}

// "pipeline" and "profiles" are last and optional: only pipeline problems carry the first, only
// problems costed with measured profiles the second.
const char* const kProblemFields[] = {"graph", "cluster", "sim", "label", "pipeline", "profiles"};
bool read_problem(Decoder& d, const std::string& what, ProblemSpec& p) {
  return read_object(d, what, kProblemFields, [&](std::string_view key) -> const char* {
    if (key == "graph") return get(d, p.graph_json);
    if (key == "cluster") return get(d, p.cluster_yaml);
    if (key == "sim") return get(d, p.sim_json);
    if (key == "pipeline") return get(d, p.pipeline_json);
    if (key == "profiles") return get(d, p.profiles_json);
    return get(d, p.graph_label);
  }, std::size(kProblemFields) - 2);
}

const char* const kTrainFields[] = {"more_problems", "stage", "episodes", "il_share", "name", "init", "init_hex",
                                    "init_label", "ablation", "hidden", "head", "state", "steps", "batch",
                                    "graphs_per_update", "learning_rate", "entropy", "epsilon", "imitate",
                                    "max_staleness", "stale", "progress_every", "measured_share"};
// "measured_share" is last and optional (specs stored before it lack it).
bool read_train_spec(Decoder& d, const std::string& what, TrainSpec& t) {
  return read_object(d, what, kTrainFields, [&](std::string_view key) -> const char* {
    if (key == "measured_share") return get(d, t.measured_share);
    if (key == "more_problems") {
      long index = 0;
      return get_list(d, t.more_problems, [&](ProblemSpec& p) -> const char* {
        return nested(d, [&] { return read_problem(d, what + ".more_problems[" + std::to_string(index++) + "]", p); });
      });
    }
    if (key == "stage") return get(d, t.stage);
    if (key == "episodes") return get(d, t.episodes);
    if (key == "il_share") return get(d, t.il_share);
    if (key == "name") return get(d, t.name);
    if (key == "init") return get(d, t.init);
    if (key == "init_hex") return get(d, t.init_hex);
    if (key == "init_label") return get(d, t.init_label);
    if (key == "ablation") return get(d, t.ablation);
    if (key == "hidden") return get(d, t.hidden);
    if (key == "head") return get(d, t.head);
    if (key == "state") return get(d, t.state);
    if (key == "steps") return get(d, t.steps);
    if (key == "batch") return get(d, t.batch);
    if (key == "graphs_per_update") return get(d, t.graphs_per_update);
    if (key == "learning_rate") return get(d, t.learning_rate);
    if (key == "entropy") return get(d, t.entropy);
    if (key == "epsilon") return get(d, t.epsilon);
    if (key == "imitate") return get(d, t.imitate);
    if (key == "max_staleness") return get(d, t.max_staleness);
    if (key == "stale") return get(d, t.stale);
    return get(d, t.progress_every);
  }, std::size(kTrainFields) - 1);
}

// "walk_share" and "kick_share" are optional (specs written before them lack them).
const char* const kPipelineJobFields[] = {"max_chunks", "min_gain", "max_passes", "walk_share", "kick_share"};
bool read_pipeline_job_spec(Decoder& d, const std::string& what, PipelineJobSpec& p) {
  return read_object(d, what, kPipelineJobFields, [&](std::string_view key) -> const char* {
    if (key == "max_chunks") return get(d, p.max_chunks);
    if (key == "min_gain") return get(d, p.min_gain);
    if (key == "walk_share") return get(d, p.walk_share);
    if (key == "kick_share") return get(d, p.kick_share);
    return get(d, p.max_passes);
  }, std::size(kPipelineJobFields) - 2);
}

// "train", "pipeline" and "measure" are last and optional: only learner jobs carry the first,
// pipeline jobs the second, measurement jobs the third (and specs stored before they existed lack them).
const char* const kJobSpecFields[] = {"kind", "problem", "budget_seconds", "budget_evaluations", "patience_seconds",
                                      "batch_seconds", "batch_evaluations", "seed", "parallelism", "priority",
                                      "fail_batch", "fail_times", "train", "pipeline", "measure"};
bool read_job_spec(Decoder& d, const std::string& what, JobSpec& s) {
  const std::size_t required = std::size(kJobSpecFields) - 3;
  return read_object(d, what, kJobSpecFields, [&](std::string_view key) -> const char* {
    if (key == "measure") return nested(d, [&] { return read_measure_request(d, what + ".measure", s.measure); });
    if (key == "train") return nested(d, [&] { return read_train_spec(d, what + ".train", s.train); });
    if (key == "pipeline") return nested(d, [&] { return read_pipeline_job_spec(d, what + ".pipeline", s.pipeline); });
    if (key == "kind") return get(d, s.kind);
    if (key == "problem") return nested(d, [&] { return read_problem(d, what + ".problem", s.problem); });
    if (key == "budget_seconds") return get(d, s.budget_seconds);
    if (key == "budget_evaluations") return get(d, s.budget_evaluations);
    if (key == "patience_seconds") return get(d, s.patience_seconds);
    if (key == "batch_seconds") return get(d, s.batch_seconds);
    if (key == "batch_evaluations") return get(d, s.batch_evaluations);
    if (key == "seed") return get(d, s.seed);
    if (key == "parallelism") return get(d, s.parallelism);
    if (key == "priority") return get(d, s.priority);
    if (key == "fail_batch") return get(d, s.fail_batch);
    return get(d, s.fail_times);
  }, required);
}

const char* const kScheduleFields[] = {"graph",  "cluster",     "graph_label", "cluster_name", "method",
                                       "sim",    "unit",        "makespan",    "lower_bound",  "placement",
                                       "job_id", "found_at",    "evaluations", "model_version", "sim_options",
                                       "scheme", "candidate", "measured", "measured_at", "measured_runs",
                                       "measured_backend"};
bool read_schedule(Decoder& d, const std::string& what, ScheduleRecord& r) {
  // Placements have no scheme, and bests never run for real no measurement.
  const std::size_t required = std::size(kScheduleFields) - 6;
  return read_object(d, what, kScheduleFields, [&](std::string_view key) -> const char* {
    if (key == "measured") return get(d, r.measured);
    if (key == "measured_at") return get(d, r.measured_at);
    if (key == "measured_runs") return get(d, r.measured_runs);
    if (key == "measured_backend") return get(d, r.measured_backend);
    if (key == "scheme") return get(d, r.scheme);
    if (key == "candidate") return get(d, r.candidate);
    if (key == "graph") return get(d, r.graph);
    if (key == "cluster") return get(d, r.cluster);
    if (key == "graph_label") return get(d, r.graph_label);
    if (key == "cluster_name") return get(d, r.cluster_name);
    if (key == "method") return get(d, r.method);
    if (key == "sim") return get(d, r.sim);
    if (key == "unit") return get(d, r.unit);
    if (key == "makespan") return get(d, r.makespan);
    if (key == "lower_bound") return get(d, r.lower_bound);
    if (key == "placement") return get(d, r.placement, what + ".placement");
    if (key == "job_id") return get(d, r.job_id);
    if (key == "found_at") return get(d, r.found_at);
    if (key == "evaluations") return get(d, r.evaluations);
    if (key == "model_version") return get(d, r.model_version);
    return get(d, r.sim_options);
  }, required);
}

const char* const kJobRecordFields[] = {"id",       "state",       "graph",         "cluster", "graph_label",
                                        "cluster_name", "started", "finished",      "evaluations",
                                        "best_makespan", "message", "owner_pid",    "owner_host", "kind",
                                        "improves"};
// "kind" and "improves" are last and optional: coordinators before them did not send them (their
// jobs are "tune", and none a background run).
bool read_job_record(Decoder& d, const std::string& what, JobRecord& j) {
  return read_object(d, what, kJobRecordFields, [&](std::string_view key) -> const char* {
    if (key == "id") return get(d, j.id);
    if (key == "kind") return get(d, j.kind);
    if (key == "improves") return get(d, j.improves);
    if (key == "state") {
      std::string state;
      if (const char* problem = get(d, state)) return problem;
      auto parsed = parse_job_state(state);
      if (!parsed) return "is not a job state";
      j.state = *parsed;
      return nullptr;
    }
    if (key == "graph") return get(d, j.graph);
    if (key == "cluster") return get(d, j.cluster);
    if (key == "graph_label") return get(d, j.graph_label);
    if (key == "cluster_name") return get(d, j.cluster_name);
    if (key == "started") return get(d, j.started);
    if (key == "finished") return get(d, j.finished);
    if (key == "evaluations") return get(d, j.evaluations);
    if (key == "best_makespan") return get(d, j.best_makespan);
    if (key == "message") return get(d, j.message);
    if (key == "owner_pid") return get(d, j.owner_pid);
    return get(d, j.owner_host);
  }, std::size(kJobRecordFields) - 2);
}

// A policy: its weights as hex text (empty in listings, which leave the weights and curves out).
void put(Writer& w, const PolicyRecord& p) {
  w.map(16);
  entry(w, "name", p.name);
  entry(w, "version", p.version);
  entry(w, "stage", p.stage);
  entry(w, "ablation", p.ablation);
  entry(w, "graphs", p.graphs);
  entry(w, "cluster", p.cluster_name);
  entry(w, "devices", p.devices);
  entry(w, "episodes", p.episodes);
  entry(w, "seconds", p.seconds);
  entry(w, "best_ratio", p.best_ratio);
  entry(w, "greedy_ratio", p.greedy_ratio);
  entry(w, "parent", p.parent);
  entry(w, "created", p.created);
  entry(w, "job", p.job);
  entry(w, "curve", p.curve);
  entry(w, "weights", hex_encode(p.weights));
}

// "job", "curve" and "weights" are last and optional (coordinators before them listed without them).
const char* const kPolicyFields[] = {"name", "version", "stage", "ablation", "graphs", "cluster", "devices", "episodes",
                                     "seconds", "best_ratio", "greedy_ratio", "parent", "created", "job", "curve", "weights"};
bool read_policy(Decoder& d, const std::string& what, PolicyRecord& p) {
  return read_object(d, what, kPolicyFields, [&](std::string_view key) -> const char* {
    if (key == "job") return get(d, p.job);
    if (key == "curve") return get(d, p.curve);
    if (key == "weights") {
      std::string hex;
      if (const char* problem = get(d, hex)) return problem;
      return hex_decode(hex, p.weights) ? nullptr : "is not hex text";
    }
    if (key == "name") return get(d, p.name);
    if (key == "version") return get(d, p.version);
    if (key == "stage") return get(d, p.stage);
    if (key == "ablation") return get(d, p.ablation);
    if (key == "graphs") return get(d, p.graphs);
    if (key == "cluster") return get(d, p.cluster_name);
    if (key == "devices") return get(d, p.devices);
    if (key == "episodes") return get(d, p.episodes);
    if (key == "seconds") return get(d, p.seconds);
    if (key == "best_ratio") return get(d, p.best_ratio);
    if (key == "greedy_ratio") return get(d, p.greedy_ratio);
    if (key == "parent") return get(d, p.parent);
    return get(d, p.created);
  }, std::size(kPolicyFields) - 3);
}

const char* const kHistoryFields[] = {"time", "makespan", "method", "job_id", "evaluations"};
bool read_history(Decoder& d, const std::string& what, HistoryRecord& h) {
  return read_object(d, what, kHistoryFields, [&](std::string_view key) -> const char* {
    if (key == "time") return get(d, h.time);
    if (key == "makespan") return get(d, h.makespan);
    if (key == "method") return get(d, h.method);
    if (key == "job_id") return get(d, h.job_id);
    return get(d, h.evaluations);
  });
}

// The payload as a whole: within the size limit, well-formed MessagePack with nothing after it, a
// map, and of our schema version (looked up first: a newer writer may have changed any field).
Status check_payload(std::string_view payload, const char* what) {
  if (payload.size() > kMaxPayloadBytes)
    return make_error(std::string(what) + ": payload of " + std::to_string(payload.size()) + " bytes is over the limit");
  MsgpackReader whole(payload);
  if (!whole.skip() || !whole.at_end()) return make_error(std::string(what) + ": payload is not MessagePack (malformed or truncated)");
  MsgpackReader in(payload);
  std::uint32_t entries = 0;
  if (!in.map(entries)) return make_error(std::string(what) + ": payload is not a map");
  for (std::uint32_t e = 0; e < entries; ++e) {
    std::string_view key;
    if (in.str(key) && key == "v") {
      std::int64_t v = 0;
      if (!in.sint(v)) break;
      if (v != kSchemaVersion)
        return make_error(std::string(what) + ": schema version " + std::to_string(v) + ", this gantry reads " +
                          std::to_string(kSchemaVersion));
      return Ok{};
    }
    in.skip();
  }
  return make_error(std::string(what) + ": payload has no schema version");
}

// Decodes a message: `read` reads its map, whose "v" was checked here and is stepped over there
// like any field its list does not name.
template <class T, class Read>
Result<T> read_message(std::string_view payload, const char* what, Read read) {
  if (Status ok = check_payload(payload, what); !ok) return ok.error();
  return read_value<T>(payload, what, read);
}

// JSON text views of records (what the store and the clients keep and print) go through the same
// field lists: nlohmann converts between the JSON text and MessagePack.
std::string json_text_of(const Writer& w) { return gantry::json_text(nlohmann::json::from_msgpack(w.bytes())); }

template <class T>
std::string json_text(const T& value) {
  Writer w;
  put(w, value);
  return json_text_of(w);
}

template <class T>
std::string json_list(const std::vector<T>& items) {
  Writer w;
  w.array(static_cast<std::uint32_t>(items.size()));
  for (const T& item : items) put(w, item);
  return json_text_of(w);
}

// JSON text as MessagePack, if it is JSON of the expected shape (an object, or a list).
Result<std::string> json_as_msgpack(const std::string& text, const char* what, bool list) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return make_error(std::string(what) + ": not JSON");
  if (list ? !j.is_array() : !j.is_object()) return make_error(std::string(what) + (list ? ": not a JSON list" : ": not a JSON object"));
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_msgpack(j);
  return std::string(bytes.begin(), bytes.end());
}

template <class T, class Read>
Result<T> read_json_object(const std::string& text, const char* what, Read read) {
  auto bytes = json_as_msgpack(text, what, false);
  if (!bytes) return bytes.error();
  return read_value<T>(bytes.value(), what, read);
}

template <class T, class Read>
Result<std::vector<T>> read_json_list(const std::string& text, const char* what, Read read) {
  auto bytes = json_as_msgpack(text, what, true);
  if (!bytes) return bytes.error();
  return read_value<std::vector<T>>(bytes.value(), what, [&](Decoder& d, const std::string& path, std::vector<T>& items) {
    return get_list(d, items, [&](T& item) { return read(d, path, item) ? nullptr : kNested; }) == nullptr;
  });
}

}  // namespace

std::string encode(const Hello& m) {
  return message(5, [&](Writer& w) {
    entry(w, "name", m.name);
    entry(w, "host", m.host);
    entry(w, "pid", m.pid);
    entry(w, "slots", m.slots);
    entry(w, "kinds", m.kinds);
  });
}
template <>
Result<Hello> decode<Hello>(std::string_view payload) {
  static const char* const fields[] = {"name", "host", "pid", "slots", "kinds"};
  auto m = read_message<Hello>(payload, "hello", [](Decoder& d, const std::string& what, Hello& h) {
    return read_object(d, what, fields, [&](std::string_view key) -> const char* {
      if (key == "name") return get(d, h.name);
      if (key == "host") return get(d, h.host);
      if (key == "pid") return get(d, h.pid);
      if (key == "slots") return get(d, h.slots);
      return get(d, h.kinds);
    });
  });
  if (m && (m.value().slots < 0 || m.value().slots > 4096))
    return make_error("hello: slots " + std::to_string(m.value().slots) + " out of range");
  return m;
}

std::string encode(const Assign& m) {
  return message(3, [&](Writer& w) {
    entry(w, "lease", m.lease);
    entry(w, "deadline_seconds", m.deadline_seconds);
    w.str("task");
    put(w, m.task);
  });
}
template <>
Result<Assign> decode<Assign>(std::string_view payload) {
  static const char* const fields[] = {"lease", "deadline_seconds", "task"};
  return read_message<Assign>(payload, "assign", [](Decoder& d, const std::string& what, Assign& a) {
    return read_object(d, what, fields, [&](std::string_view key) -> const char* {
      if (key == "lease") return get(d, a.lease);
      if (key == "deadline_seconds") return get(d, a.deadline_seconds);
      return nested(d, [&] { return read_task(d, what + ".task", a.task); });
    });
  });
}

std::string encode(const Done& m) {
  const TaskResult& r = m.result;
  return message(6, [&](Writer& w) {
    entry(w, "lease", m.lease);
    entry(w, "sequence", r.sequence);
    w.str("body");
    w.bin(r.body);
    entry(w, "worker", r.worker);
    entry(w, "error", r.error);
    entry(w, "seconds", r.seconds);
  });
}
template <>
Result<Done> decode<Done>(std::string_view payload) {
  static const char* const fields[] = {"lease", "sequence", "body", "worker", "error", "seconds"};
  return read_message<Done>(payload, "done", [](Decoder& d, const std::string& what, Done& m) {
    TaskResult& r = m.result;
    return read_object(d, what, fields, [&](std::string_view key) -> const char* {
      if (key == "lease") return get(d, m.lease);
      if (key == "sequence") return get(d, r.sequence);
      if (key == "body") return get_bin(d, r.body);
      if (key == "worker") return get(d, r.worker);
      if (key == "error") return get(d, r.error);
      return get_seconds(d, r.seconds);
    });
  });
}

std::string encode(const NeedProblem& m) {
  return message(1, [&](Writer& w) { entry(w, "key", m.key); });
}
template <>
Result<NeedProblem> decode<NeedProblem>(std::string_view payload) {
  static const char* const fields[] = {"key"};
  return read_message<NeedProblem>(payload, "need_problem", [](Decoder& d, const std::string& what, NeedProblem& m) {
    return read_object(d, what, fields, [&](std::string_view key) -> const char* {
      return get(d, m.key);
    });
  });
}

std::string encode(const ProblemContent& m) {
  return message(2, [&](Writer& w) {
    entry(w, "key", m.key);
    w.str("spec");
    put(w, m.spec);
  });
}
template <>
Result<ProblemContent> decode<ProblemContent>(std::string_view payload) {
  static const char* const fields[] = {"key", "spec"};
  return read_message<ProblemContent>(payload, "problem", [](Decoder& d, const std::string& what, ProblemContent& m) {
    return read_object(d, what, fields, [&](std::string_view key) -> const char* {
      if (key == "key") return get(d, m.key);
      return nested(d, [&] { return read_problem(d, what + ".spec", m.spec); });
    });
  });
}

std::string encode(const Request& m) {
  return message(9, [&](Writer& w) {
    entry(w, "id", m.id);
    entry(w, "job", m.job);
    w.str("spec");
    put(w, m.spec);
    entry(w, "what", m.what);
    entry(w, "graph", m.graph);
    entry(w, "runtime", m.runtime);
    entry(w, "prefix", m.prefix);
    entry(w, "policy", m.policy);
    entry(w, "key", m.key);
  });
}
template <>
Result<Request> decode<Request>(std::string_view payload) {
  // "policy" and "key" are last and optional (clients before them do not send them).
  static const char* const fields[] = {"id", "job", "spec", "what", "graph", "runtime", "prefix", "policy", "key"};
  return read_message<Request>(payload, "request", [](Decoder& d, const std::string& what, Request& m) {
    return read_object(d, what, fields, [&](std::string_view key) -> const char* {
      if (key == "id") return get(d, m.id);
      if (key == "job") return get(d, m.job);
      if (key == "spec") return nested(d, [&] { return read_job_spec(d, what + ".spec", m.spec); });
      if (key == "what") return get(d, m.what);
      if (key == "graph") return get(d, m.graph);
      if (key == "runtime") return get(d, m.runtime);
      if (key == "policy") return get(d, m.policy);
      if (key == "key") return get(d, m.key);
      return get(d, m.prefix);
    }, std::size(fields) - 2);
  });
}

std::string encode(const Reply& m) {
  return message(4, [&](Writer& w) {
    entry(w, "id", m.id);
    entry(w, "ok", m.ok);
    entry(w, "error", m.error);
    entry(w, "data", m.data);
  });
}
template <>
Result<Reply> decode<Reply>(std::string_view payload) {
  static const char* const fields[] = {"id", "ok", "error", "data"};
  return read_message<Reply>(payload, "reply", [](Decoder& d, const std::string& what, Reply& m) {
    return read_object(d, what, fields, [&](std::string_view key) -> const char* {
      if (key == "id") return get(d, m.id);
      if (key == "ok") return get(d, m.ok);
      if (key == "error") return get(d, m.error);
      return get(d, m.data);
    });
  });
}

std::string encode_empty() {
  return message(0, [](Writer&) {});
}

std::string job_spec_text(const JobSpec& spec) { return json_text(spec); }

Result<JobSpec> parse_job_spec_text(const std::string& text) {
  return read_json_object<JobSpec>(text, "stored job spec", read_job_spec);
}

std::string schedule_record_json(const ScheduleRecord& record) { return json_text(record); }

Result<ScheduleRecord> schedule_record_from_json(const std::string& text) {
  return read_json_object<ScheduleRecord>(text, "stored best", read_schedule);
}

std::string job_records_json(const std::vector<JobRecord>& jobs) { return json_list(jobs); }

Result<std::vector<JobRecord>> job_records_from_json(const std::string& text) {
  return read_json_list<JobRecord>(text, "job record", read_job_record);
}

std::string schedule_records_json(const std::vector<ScheduleRecord>& records) { return json_list(records); }

Result<std::vector<ScheduleRecord>> schedule_records_from_json(const std::string& text) {
  return read_json_list<ScheduleRecord>(text, "stored best", read_schedule);
}

std::string history_records_json(const std::vector<HistoryRecord>& records) { return json_list(records); }

std::string policy_records_json(const std::vector<PolicyRecord>& records) { return json_list(records); }

Result<std::vector<PolicyRecord>> policy_records_from_json(const std::string& text) {
  return read_json_list<PolicyRecord>(text, "policy record", read_policy);
}

std::string policy_record_json(const PolicyRecord& record) { return json_text(record); }

Result<PolicyRecord> policy_record_from_json(const std::string& text) {
  return read_json_object<PolicyRecord>(text, "policy record", read_policy);
}

Result<std::vector<HistoryRecord>> history_records_from_json(const std::string& text) {
  return read_json_list<HistoryRecord>(text, "history record", read_history);
}

}  // namespace gantry::wire
