#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/graph_io.hpp"
#include "core/json_util.hpp"

namespace gantry {

namespace {

using nlohmann::json;

// Reads an optional number; a present field that is not a number is an error naming its path.
Result<double> field(const json& obj, const char* key, double fallback, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_number()) return make_error(where + "." + key + " is not a number");
  return it->get<double>();
}

Result<std::string> text_field(const json& obj, const char* key, const std::string& fallback, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_string()) return make_error(where + "." + key + " is not a string");
  return it->get<std::string>();
}

// A field the format does not know is a typo ("cots") or a newer format: either way the value
// would be ignored and defaults used, so it is an error naming the field and the known ones.
Status known_fields(const json& obj, const std::vector<const char*>& known, const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool found = false;
    for (const char* k : known) found = found || it.key() == k;
    if (found) continue;
    std::string list;
    for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
    return make_error(where + "." + it.key() + ": unknown field (known: " + list + ")");
  }
  return Ok{};
}

const std::vector<const char*> kRootFields = {"format", "version", "name", "cost_unit", "ops", "edges"};
const std::vector<const char*> kOpFields = {"id", "name", "kind", "flops", "bytes", "output_bytes", "memory", "mem_alloc",
                                            "mem_free", "cost", "transfer_cost", "cost_by_kind", "shape", "operation"};
const std::vector<const char*> kEdgeFields = {"src", "dst", "bytes", "cost", "slot"};
const std::vector<const char*> kOperationFields = {"fn", "dtype", "operands", "attrs"};
const std::vector<const char*> kOperandFields = {"from", "name", "shape", "scale", "integer", "slice"};
const char* const kSources[] = {"edge", "param", "input"};

Result<std::vector<std::int64_t>> int_list(const json& value, bool positive, const std::string& where) {
  if (!value.is_array()) return make_error(where + " is not an array");
  std::vector<std::int64_t> out;
  for (std::size_t k = 0; k < value.size(); ++k) {
    if (!value[k].is_number_integer() || value[k].get<long long>() < (positive ? 1 : 0))
      return make_error(where + "[" + std::to_string(k) + "] is not a " + (positive ? "positive" : "non-negative") +
                        " integer");
    out.push_back(value[k].get<std::int64_t>());
  }
  return out;
}

Result<Operand> operand_from_json(const json& o, const std::string& where) {
  if (!o.is_object()) return make_error(where + " is not an object");
  if (auto known = known_fields(o, kOperandFields, where); !known) return known.error();
  Operand operand;
  auto from = text_field(o, "from", "edge", where);
  if (!from) return from.error();
  bool found = false;
  for (int k = 0; k < 3; ++k)
    if (from.value() == kSources[k]) {
      operand.source = static_cast<Operand::Source>(k);
      found = true;
    }
  if (!found) return make_error(where + ".from: '" + from.value() + "' is not edge, param or input");
  auto name = text_field(o, "name", "", where);
  if (!name) return name.error();
  operand.name = name.value();
  if (o.contains("shape")) {
    auto shape = int_list(o["shape"], true, where + ".shape");
    if (!shape) return shape.error();
    operand.shape = shape.value();
  }
  auto scale = field(o, "scale", 1, where);
  if (!scale) return scale.error();
  operand.scale = scale.value();
  if (o.contains("integer")) {
    if (!o["integer"].is_boolean()) return make_error(where + ".integer is not true or false");
    operand.integer = o["integer"].get<bool>();
  }
  if (o.contains("slice")) {
    const json& slices = o["slice"];
    if (!slices.is_array()) return make_error(where + ".slice is not an array of [dim, begin, end]");
    for (std::size_t k = 0; k < slices.size(); ++k) {
      auto range = int_list(slices[k], false, where + ".slice[" + std::to_string(k) + "]");
      if (!range) return range.error();
      if (range.value().size() != 3) return make_error(where + ".slice[" + std::to_string(k) + "] is not [dim, begin, end]");
      operand.slices.push_back({static_cast<int>(range.value()[0]), range.value()[1], range.value()[2]});
    }
  }
  return operand;
}

Result<Operation> operation_from_json(const json& o, const std::string& where) {
  if (!o.is_object()) return make_error(where + " is not an object");
  if (auto known = known_fields(o, kOperationFields, where); !known) return known.error();
  Operation operation;
  auto fn_name = text_field(o, "fn", "", where);
  if (!fn_name) return fn_name.error();
  auto fn = parse_tensor_fn(fn_name.value());
  if (!fn) {
    std::string list;
    for (int k = 0; k < kTensorFnCount; ++k) list += std::string(k ? ", " : "") + to_string(static_cast<TensorFn>(k));
    return make_error(where + ".fn: unknown function '" + fn_name.value() + "' (known: " + list + ")");
  }
  operation.fn = *fn;
  auto dtype_name = text_field(o, "dtype", "f32", where);
  if (!dtype_name) return dtype_name.error();
  auto dtype = parse_dtype(dtype_name.value());
  if (!dtype) return make_error(where + ".dtype: unknown dtype '" + dtype_name.value() + "' (known: f32, bf16, f64)");
  operation.dtype = *dtype;
  if (!o.contains("operands") || !o["operands"].is_array()) return make_error(where + ".operands is not an array");
  for (std::size_t k = 0; k < o["operands"].size(); ++k) {
    auto operand = operand_from_json(o["operands"][k], where + ".operands[" + std::to_string(k) + "]");
    if (!operand) return operand.error();
    operation.operands.push_back(std::move(operand.value()));
  }
  if (o.contains("attrs")) {
    if (!o["attrs"].is_object()) return make_error(where + ".attrs is not an object");
    for (auto& [key, value] : o["attrs"].items()) {
      if (!value.is_number()) return make_error(where + ".attrs." + key + " is not a number");
      operation.with(key, value.get<double>());
    }
  }
  return operation;
}

json operation_to_json(const Operation& operation) {
  json operands = json::array();
  for (const Operand& operand : operation.operands) {
    json o = json::object();
    if (operand.source != Operand::Source::edge) {
      o["from"] = kSources[static_cast<int>(operand.source)];
      o["name"] = operand.name;
      o["shape"] = operand.shape;
      if (operand.scale != 1) o["scale"] = operand.scale;
      if (operand.integer) o["integer"] = true;
    }
    if (!operand.slices.empty()) {
      json slices = json::array();
      for (const SliceRange& r : operand.slices) slices.push_back({r.dim, r.begin, r.end});
      o["slice"] = std::move(slices);
    }
    operands.push_back(std::move(o));
  }
  json out = {{"fn", to_string(operation.fn)}, {"dtype", to_string(operation.dtype)}, {"operands", std::move(operands)}};
  if (!operation.attrs.empty()) {
    json attrs = json::object();
    for (const auto& [key, value] : operation.attrs) attrs[key] = value;
    out["attrs"] = std::move(attrs);
  }
  return out;
}
// Units a graph's explicit costs may be in: seconds and its fractions, or abstract units.
const std::vector<std::string> kCostUnits = {"s", "ms", "us", "ns", "units"};

}  // namespace

Result<Graph> read_graph_json_checked(const std::string& text, const std::string& source);

// Type mismatches deep inside (a string where a number belongs) surface as nlohmann exceptions;
// they become errors naming the file.
Result<Graph> read_graph_json(const std::string& text, const std::string& source) {
  try {
    return read_graph_json_checked(text, source);
  } catch (const nlohmann::json::exception& e) {
    return make_error(source + ": " + e.what());  // not reached for well-formed checks above; kept as a net
  }
}

Result<Graph> read_graph_json_checked(const std::string& text, const std::string& source) {
  auto parsed = parse_json(text, source);
  if (!parsed) return parsed.error();
  const json& root = parsed.value();
  if (!root.is_object() || !root.contains("ops") || !root["ops"].is_array())
    return make_error(source + ": expected a JSON object with an 'ops' array (gantry graph format)");
  if (auto known = known_fields(root, kRootFields, source + ": $"); !known) return known.error();
  if (Status ok = check_format_and_version(root, "gantry-graph", source + ": $"); !ok) return ok.error();
  auto unit = text_field(root, "cost_unit", "s", source + ": $");
  if (!unit) return unit.error();
  if (std::find(kCostUnits.begin(), kCostUnits.end(), unit.value()) == kCostUnits.end())
    return make_error(source + ": $.cost_unit: unknown unit '" + unit.value() + "' (expected s, ms, us, ns or units)");
  if (root.contains("name") && !root["name"].is_string()) return make_error(source + ": $.name is not a string");
  GraphBuilder builder(source, unit.value());

  // Ops may carry their own integer ids; edges refer to those ids.
  std::unordered_map<long long, OpId> index_of;
  const json& ops = root["ops"];
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const json& o = ops[i];
    const std::string where = source + ": $.ops[" + std::to_string(i) + "]";
    if (!o.is_object()) return make_error(where + " is not an object");
    if (auto known = known_fields(o, kOpFields, where); !known) return known.error();
    OpSpec spec;
    long long id = static_cast<long long>(i);
    if (o.contains("id")) {
      if (!o["id"].is_number_integer()) return make_error(where + ".id is not an integer");
      id = o["id"].get<long long>();
    }
    if (!index_of.emplace(id, static_cast<OpId>(i)).second)
      return make_error(where + ": duplicate op id " + std::to_string(id));
    auto name = text_field(o, "name", "", where);
    if (!name) return name.error();
    spec.name = name.value();
    if (o.contains("kind")) {
      auto kind_name = text_field(o, "kind", "", where);
      if (!kind_name) return kind_name.error();
      auto kind = parse_op_kind(kind_name.value());
      if (!kind) return make_error(where + ".kind: unknown op kind '" + kind_name.value() + "'");
      spec.kind = *kind;
    }
    for (auto [key, target, fallback] :
         {std::tuple{"flops", &spec.flops, 0.0}, std::tuple{"bytes", &spec.bytes, 0.0},
          std::tuple{"output_bytes", &spec.output_bytes, 0.0}, std::tuple{"memory", &spec.memory, 0.0},
          std::tuple{"mem_alloc", &spec.mem_alloc, 0.0}, std::tuple{"mem_free", &spec.mem_free, 0.0},
          std::tuple{"cost", &spec.cost, -1.0}, std::tuple{"transfer_cost", &spec.transfer_cost, -1.0}}) {
      auto value = field(o, key, fallback, where);
      if (!value) return value.error();
      *target = value.value();
    }
    // An explicit negative cost is an error (the builder checks); -1 only ever means "absent"
    // when the field is missing, so map a present -1 to an error too.
    for (const char* key : {"cost", "transfer_cost"})
      if (o.contains(key) && o[key].is_number() && o[key].get<double>() < 0)
        return make_error(where + "." + key + " is negative (" + std::to_string(o[key].get<double>()) + ")");
    if (o.contains("cost_by_kind")) {
      if (!o["cost_by_kind"].is_object()) return make_error(where + ".cost_by_kind is not an object");
      // Each value is checked below; a negative one is left to the builder, which names the op.
      for (auto& [kind, value] : o["cost_by_kind"].items()) {
        if (!value.is_number()) return make_error(where + ".cost_by_kind." + kind + " is not a number");
        spec.cost_by_kind.emplace_back(kind, value.get<double>());
      }
    }
    if (o.contains("shape")) {
      const json& shape = o["shape"];
      if (!shape.is_array()) return make_error(where + ".shape is not an array");
      for (std::size_t k = 0; k < shape.size(); ++k) {
        if (!shape[k].is_number_integer() || shape[k].get<long long>() < 0)
          return make_error(where + ".shape[" + std::to_string(k) + "] is not a non-negative integer");
        spec.shape.push_back(shape[k].get<std::int64_t>());
      }
    }
    if (o.contains("operation")) {
      auto operation = operation_from_json(o["operation"], where + ".operation");
      if (!operation) return operation.error();
      spec.operation = std::move(operation.value());
    }
    builder.add_op(std::move(spec));
  }

  if (root.contains("edges")) {
    const json& edges = root["edges"];
    if (!edges.is_array()) return make_error(source + ": 'edges' is not an array");
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const json& e = edges[i];
      const std::string where = source + ": $.edges[" + std::to_string(i) + "]";
      EdgeSpec spec;
      json src, dst;
      if (e.is_array() && e.size() == 2) {
        src = e[0];
        dst = e[1];
      } else if (e.is_array()) {
        return make_error(where + ": an edge array has exactly two entries [src, dst], found " + std::to_string(e.size()) +
                          " (use {\"src\":..., \"dst\":..., \"bytes\":...} for more)");
      } else if (e.is_object() && e.contains("src") && e.contains("dst")) {
        if (auto known = known_fields(e, kEdgeFields, where); !known) return known.error();
        src = e["src"];
        dst = e["dst"];
        auto bytes = field(e, "bytes", 0, where);
        auto cost = field(e, "cost", -1, where);
        if (!bytes) return bytes.error();
        if (!cost) return cost.error();
        if (e.contains("cost") && cost.value() < 0)
          return make_error(where + ".cost is negative (" + std::to_string(cost.value()) + ")");
        spec.bytes = bytes.value();
        spec.cost = cost.value();
        if (e.contains("slot")) {
          if (!e["slot"].is_number_integer() || e["slot"].get<long long>() < 0)
            return make_error(where + ".slot is not a non-negative integer");
          spec.slot = e["slot"].get<int>();
        }
      } else {
        return make_error(where + ": expected [src, dst] or {\"src\":..., \"dst\":...}");
      }
      if (!src.is_number_integer() || !dst.is_number_integer())
        return make_error(where + ": src and dst must be integer op ids");
      for (auto [end, target] : {std::pair{src.get<long long>(), &spec.src}, std::pair{dst.get<long long>(), &spec.dst}}) {
        auto it = index_of.find(end);
        if (it == index_of.end()) return make_error(where + ": unknown op id " + std::to_string(end));
        *target = it->second;
      }
      builder.add_edge(spec);
    }
  }
  return builder.build();
}

std::string graph_to_json(const Graph& g, int indent) {
  json root;
  root["format"] = "gantry-graph";
  root["version"] = 1;
  root["cost_unit"] = g.cost_unit();
  json ops = json::array();
  for (OpId op = 0; op < g.size(); ++op) {
    json o;
    o["id"] = op;
    o["name"] = g.name(op);
    o["kind"] = to_string(g.kind(op));
    if (g.flops(op) > 0) o["flops"] = g.flops(op);
    if (g.bytes(op) > 0) o["bytes"] = g.bytes(op);
    if (g.output_bytes(op) > 0) o["output_bytes"] = g.output_bytes(op);
    if (g.memory(op) > 0) o["memory"] = g.memory(op);
    if (g.mem_alloc(op) > 0) o["mem_alloc"] = g.mem_alloc(op);
    if (g.mem_free(op) > 0) o["mem_free"] = g.mem_free(op);
    if (g.cost(op) >= 0) o["cost"] = g.cost(op);
    if (g.transfer_cost(op) >= 0) o["transfer_cost"] = g.transfer_cost(op);
    for (std::size_t k = 0; k < g.cost_kinds().size(); ++k)
      if (g.cost_for_kind(static_cast<int>(k), op) >= 0)
        o["cost_by_kind"][g.cost_kinds()[k]] = g.cost_for_kind(static_cast<int>(k), op);
    if (!g.shape(op).empty()) o["shape"] = g.shape(op);
    if (const Operation* operation = g.operation(op)) o["operation"] = operation_to_json(*operation);
    ops.push_back(std::move(o));
  }
  json edges = json::array();
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    json edge = {{"src", g.edge_src(e)}, {"dst", g.edge_dst(e)}};
    if (g.edge_bytes(e) > 0) edge["bytes"] = g.edge_bytes(e);
    if (g.edge_cost(e) >= 0) edge["cost"] = g.edge_cost(e);
    if (g.edge_slot(e) >= 0) edge["slot"] = g.edge_slot(e);
    edges.push_back(std::move(edge));
  }
  root["ops"] = std::move(ops);
  root["edges"] = std::move(edges);
  return root.dump(indent);
}

}  // namespace gantry
