#include "core/json_util.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gantry {

Result<std::string> read_text_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return make_error(path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) return make_error(path + ": is a directory, not a file");
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(path + ": cannot read: " + std::strerror(errno));
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

Result<nlohmann::json> parse_json(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse errors carry "line L, column C"; 1e400 is out_of_range
    return make_error(source + ": invalid JSON: " + e.what());
  }
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gantry
