#include "core/json_util.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gantry {

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(path + ": cannot open file for reading");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

Result<nlohmann::json> parse_json(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message carries "line L, column C".
    return make_error(source + ": invalid JSON: " + e.what());
  }
}

}  // namespace gantry
