#pragma once
#include <string>

#include "core/result.hpp"

namespace gantry::cli {

// "30s", "500ms", "2m", "1h" or a plain number of seconds.
Result<double> parse_duration(const std::string& text);

}  // namespace gantry::cli
