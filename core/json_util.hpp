#pragma once
// Small helpers shared by the JSON readers and writers: whole-file reads and writes, parsing with located
// errors, and JSON text that survives strings which are not UTF-8.
#include <nlohmann/json_fwd.hpp>
#include <exception>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gantry {

Result<std::string> read_text_file(const std::string& path);
// Writes (replaces) a whole file; the error names the path.
Status write_text_file(const std::string& path, const std::string& text);
Result<nlohmann::json> parse_json(const std::string& text, const std::string& source);
// A nlohmann exception's message without the library's tag ("[json.exception.parse_error.101] ").
std::string json_error_text(const std::exception& e);

// An error naming the first key of `object` that is not in `known` (with the known ones): a
// misspelt key would otherwise read as absent and its default would silently apply.
Status check_known_keys(const nlohmann::json& object, const std::vector<std::string>& known, const std::string& source);

// A gantry file's "format" and "version", when present: the format named `format`, version 1
// (a newer file, or another kind of gantry file, is refused by name rather than half read).
// `where` names the root in errors ("FILE: $").
Status check_format_and_version(const nlohmann::json& root, const std::string& format, const std::string& where);

// JSON text of a value (indent < 0: one line). nlohmann's dump() throws on a string that is not
// UTF-8; names, paths and messages that come from clients and workers are not checked, and a
// server must not die of one (a Latin-1 file name in a submitted job), so such bytes become U+FFFD.
std::string json_text(const nlohmann::json& value, int indent = -1);

}  // namespace gantry
