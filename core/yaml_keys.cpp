#include "core/yaml_keys.hpp"

#include <yaml-cpp/yaml.h>

#include <map>

namespace gantry {

namespace {

// A key as written: a scalar's text, or a complex key's YAML (two such keys are the same when
// their YAML is).
std::string key_text(const YAML::Node& key) { return key.IsScalar() ? key.Scalar() : YAML::Dump(key); }

std::string line_of(const YAML::Node& node) { return std::to_string(node.Mark().line + 1); }

}  // namespace

Status check_unique_keys(const YAML::Node& root, const std::string& source) {
  if (root.IsSequence()) {
    for (const YAML::Node& item : root)
      if (Status ok = check_unique_keys(item, source); !ok) return ok;
    return Ok{};
  }
  if (!root.IsMap()) return Ok{};
  std::map<std::string, YAML::Node> seen;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = key_text(it->first);
    auto [first, fresh] = seen.emplace(key, it->first);
    if (!fresh)
      return make_error(source + ":" + line_of(it->first) + ": key \"" + key + "\" is set again (first set on line " +
                        line_of(first->second) + "); each key once");
    if (Status ok = check_unique_keys(it->second, source); !ok) return ok;
  }
  return Ok{};
}

}  // namespace gantry
