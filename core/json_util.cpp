#include "core/json_util.hpp"

#include <sys/stat.h>

#include <algorithm>
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

Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return make_error(path + ": cannot open for writing: " + std::strerror(errno));
  file << text;
  if (!file.flush()) return make_error(path + ": write failed: " + std::strerror(errno));
  return Ok{};
}

Result<nlohmann::json> parse_json(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse errors carry "line L, column C"; 1e400 is out_of_range
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, ...": the tag is the library's
    if (!what.empty() && what[0] == '[' && what.find("] ") != std::string::npos) what = what.substr(what.find("] ") + 2);
    return make_error(source + ": invalid JSON: " + what);
  }
}

Status check_format_and_version(const nlohmann::json& root, const std::string& format, const std::string& where) {
  if (!root.is_object()) return Ok{};
  if (root.contains("format") && root["format"] != format)
    return make_error(where + ".format: " + json_text(root["format"]) + " is not a " + format + " file (expected \"" +
                      format + "\")");
  if (root.contains("version") && !(root["version"].is_number_integer() && root["version"].get<long long>() == 1))
    return make_error(where + ".version: " + json_text(root["version"]) + " is not supported (this gantry reads version 1)");
  return Ok{};
}

Status check_known_keys(const nlohmann::json& object, const std::vector<std::string>& known, const std::string& source) {
  if (!object.is_object()) return Ok{};
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    return make_error(source + ": unknown key \"" + it.key() + "\" (known: " + list + ")");
  }
  return Ok{};
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gantry
