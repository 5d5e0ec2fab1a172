#pragma once
// Small helpers shared by the JSON readers: whole-file reads and parsing with located errors.
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/result.hpp"

namespace gantry {

Result<std::string> read_text_file(const std::string& path);
Result<nlohmann::json> parse_json(const std::string& text, const std::string& source);

}  // namespace gantry
