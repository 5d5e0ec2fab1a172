#include "executor/measurement_json.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "core/json_util.hpp"

namespace gantry {

namespace {

using nlohmann::json;

const json& field(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) throw std::runtime_error(where + ": no \"" + key + "\"");
  return object.at(key);
}

// A finite number >= 0: `what` says what it should be in the error.
double non_negative(const json& object, const char* key, const std::string& where, const char* what) {
  const json& value = field(object, key, where);
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
    throw std::runtime_error(where + ": \"" + key + "\" is not " + what + " (a finite number >= 0)");
  return value.get<double>();
}

double seconds(const json& object, const char* key, const std::string& where) {
  return non_negative(object, key, where, "a time in seconds");
}

int index(const json& object, const char* key, int below, const std::string& where) {
  const json& value = field(object, key, where);
  if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() >= below)
    throw std::runtime_error(where + ": \"" + key + "\" is not a whole number from 0 to " + std::to_string(below - 1));
  return static_cast<int>(value.get<long long>());
}

// The op a record names: by "op_id", or in files of gantry-exec before it wrote ids, by its name.
class OpLookup {
 public:
  explicit OpLookup(const Graph& graph) : graph_(graph) {}
  OpId operator()(const json& record, const std::string& where) {
    if (record.is_object() && record.contains("op_id")) return index(record, "op_id", graph_.size(), where);
    const json& name = field(record, "op", where);
    if (!name.is_string()) throw std::runtime_error(where + ": \"op\" is not a name");
    if (by_name_.empty())
      for (OpId op = 0; op < graph_.size(); ++op)
        if (!by_name_.emplace(graph_.name(op), op).second) by_name_[graph_.name(op)] = -1;  // ambiguous
    const auto found = by_name_.find(name.get<std::string>());
    if (found == by_name_.end()) throw std::runtime_error(where + ": the graph has no op " + name.get<std::string>());
    if (found->second < 0)
      throw std::runtime_error(where + ": the graph has several ops named " + name.get<std::string>() + " (and no op_id)");
    return found->second;
  }

 private:
  const Graph& graph_;
  std::map<std::string, OpId> by_name_;
};

void check_interval(double start, double end, const std::string& where) {
  if (end < start) throw std::runtime_error(where + ": ends before it starts");
}

Measurement read(const json& doc, const Graph& graph, const std::string& source) {
  Measurement m;
  const json& backend = field(doc, "backend", source);
  if (!backend.is_string()) throw std::runtime_error(source + ": \"backend\" is not a string");
  m.backend = backend.get<std::string>();
  if (doc.contains("layout") && doc["layout"].is_string()) m.layout = doc["layout"].get<std::string>();
  const int devices = index(doc, "devices", kMaxDevices + 1, source);
  if (devices < 1) throw std::runtime_error(source + ": \"devices\" is 0");
  const json& makespans = field(doc, "makespans", source);
  if (!makespans.is_array() || makespans.empty()) throw std::runtime_error(source + ": \"makespans\" is not a list of timed runs");
  for (std::size_t i = 0; i < makespans.size(); ++i) {
    const std::string where = source + ": makespans[" + std::to_string(i) + "]";
    if (!makespans[i].is_number() || !(makespans[i].get<double>() > 0) || !std::isfinite(makespans[i].get<double>()))
      throw std::runtime_error(where + " is not a time in seconds (a finite number > 0)");
    m.makespans.push_back(makespans[i].get<double>());
  }
  m.median = seconds(doc, "median", source);
  m.min = seconds(doc, "min", source);
  m.max = seconds(doc, "max", source);
  if (!(m.min <= m.median && m.median <= m.max)) throw std::runtime_error(source + ": min <= median <= max does not hold");
  // Files of gantry-exec before it wrote it: the median (the median run's makespan for an odd count).
  m.median_run.makespan = doc.contains("median_run_makespan") ? seconds(doc, "median_run_makespan", source) : m.median;

  const json& ops = field(doc, "ops", source);
  if (!ops.is_array() || ops.size() != static_cast<std::size_t>(graph.size()))
    throw std::runtime_error(source + ": \"ops\" lists " + std::to_string(ops.is_array() ? ops.size() : 0) +
                             " ops; the graph has " + std::to_string(graph.size()));
  m.median_run.ops.assign(static_cast<std::size_t>(graph.size()), OpRecord{});
  std::vector<bool> seen(static_cast<std::size_t>(graph.size()), false);
  OpLookup op_of(graph);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string where = source + ": ops[" + std::to_string(i) + "]";
    const OpId op = op_of(ops[i], where);
    if (seen[static_cast<std::size_t>(op)]) throw std::runtime_error(where + ": op " + graph.name(op) + " is listed twice");
    seen[static_cast<std::size_t>(op)] = true;
    OpRecord& r = m.median_run.ops[static_cast<std::size_t>(op)];
    r.op = op;
    r.device = index(ops[i], "device", devices, where);
    r.start = seconds(ops[i], "start", where);
    r.end = seconds(ops[i], "end", where);
    check_interval(r.start, r.end, where);
  }
  const json& transfers = field(doc, "transfers", source);
  if (!transfers.is_array()) throw std::runtime_error(source + ": \"transfers\" is not a list");
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const std::string where = source + ": transfers[" + std::to_string(i) + "]";
    TransferRecord t;
    t.op = op_of(transfers[i], where);
    t.from = index(transfers[i], "from", devices, where);
    t.to = index(transfers[i], "to", devices, where);
    t.start = seconds(transfers[i], "start", where);
    t.end = seconds(transfers[i], "end", where);
    t.bytes = non_negative(transfers[i], "bytes", where, "a byte count");
    if (t.from == t.to) throw std::runtime_error(where + ": a copy from device " + std::to_string(t.from) + " to itself");
    check_interval(t.start, t.end, where);
    m.median_run.transfers.push_back(t);
  }
  return m;
}

}  // namespace

std::string measurement_to_json(const Graph& graph, int devices, const Measurement& m, int indent) {
  json ops = json::array(), transfers = json::array();
  for (const OpRecord& r : m.median_run.ops)
    ops.push_back({{"op_id", r.op}, {"op", graph.name(r.op)}, {"device", r.device}, {"start", r.start}, {"end", r.end}});
  for (const TransferRecord& t : m.median_run.transfers)
    transfers.push_back({{"op_id", t.op}, {"op", graph.name(t.op)}, {"from", t.from}, {"to", t.to}, {"start", t.start},
                         {"end", t.end}, {"bytes", t.bytes}});
  const json doc = {{"backend", m.backend}, {"devices", devices},      {"layout", m.layout},
                    {"median", m.median},   {"min", m.min},            {"max", m.max},
                    {"spread", m.spread()}, {"makespans", m.makespans}, {"median_run_makespan", m.median_run.makespan},
                    {"ops", ops},           {"transfers", transfers}};
  return json_text(doc, indent);
}

Result<Measurement> measurement_from_json(const std::string& text, const Graph& graph, const std::string& source) {
  auto doc = parse_json(text, source);
  if (!doc) return doc.error();
  try {
    return read(doc.value(), graph, source);
  } catch (const std::exception& e) {
    return make_error(e.what());
  }
}

}  // namespace gantry
