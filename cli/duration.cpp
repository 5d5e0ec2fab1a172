#include "cli/duration.hpp"

#include <cmath>
#include <cstdlib>

namespace gantry::cli {

Result<double> parse_duration(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit = end ? std::string(end) : "";
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  if (end == text.c_str() || scale == 0 || !std::isfinite(value) || value <= 0)
    return make_error("invalid duration '" + text + "' (expected a positive time, e.g. 30s, 500ms, 2m)");
  if (!std::isfinite(value * scale))  // 1e306h: past the largest number of seconds (a budget that never ends)
    return make_error("invalid duration '" + text + "': too long to count in seconds");
  return value * scale;
}

}  // namespace gantry::cli
