#include "core/yaml_keys.hpp"

#include <yaml-cpp/yaml.h>

#include <map>

namespace gantry {

namespace {

// Nodes visited at most: an alias is visited at each reference, so a few hundred bytes of nested
// aliases (each list repeating the one before ten times) stand for billions of nodes. A job or
// cluster file has hundreds.
constexpr long kMostNodes = 100'000;

// A key as written: a scalar's text, or a complex key's YAML (two such keys are the same when
// their YAML is).
std::string key_text(const YAML::Node& key) { return key.IsScalar() ? key.Scalar() : YAML::Dump(key); }

std::string line_of(const YAML::Node& node) { return std::to_string(node.Mark().line + 1); }

Status check_node(const YAML::Node& node, const std::string& source, long& visited) {
  if (++visited > kMostNodes)
    return make_error(source + ": more than " + std::to_string(kMostNodes) +
                      " YAML nodes (counting each use of an alias): not a gantry file");
  if (node.IsSequence()) {
    for (const YAML::Node& item : node)
      if (Status ok = check_node(item, source, visited); !ok) return ok;
    return Ok{};
  }
  if (!node.IsMap()) return Ok{};
  std::map<std::string, YAML::Node> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = key_text(it->first);
    auto [first, fresh] = seen.emplace(key, it->first);
    if (!fresh)
      return make_error(source + ":" + line_of(it->first) + ": key \"" + key + "\" is set again (first set on line " +
                        line_of(first->second) + "); each key once");
    if (Status ok = check_node(it->second, source, visited); !ok) return ok;
  }
  return Ok{};
}

}  // namespace

Status check_unique_keys(const YAML::Node& root, const std::string& source) {
  long visited = 0;
  return check_node(root, source, visited);
}

}  // namespace gantry
