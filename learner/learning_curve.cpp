#include "learner/learning_curve.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace gantry {
namespace {

constexpr const char* kHeader = "episodes,seconds,version,mean_ratio,best_ratio,match,entropy,loss,episodes_per_second";
constexpr int kColumns = 9;

// The comma-separated numbers of one line, all of them finite.
bool numbers(const std::string& line, double* out) {
  const char* at = line.c_str();
  for (int k = 0; k < kColumns; ++k) {
    char* end = nullptr;
    errno = 0;
    out[k] = std::strtod(at, &end);
    if (end == at || errno == ERANGE || !std::isfinite(out[k])) return false;
    if (k + 1 < kColumns && *end != ',') return false;
    at = end + 1;
    if (k + 1 == kColumns && *end != '\0') return false;
  }
  return true;
}

}  // namespace

std::string learning_curve_csv(const std::vector<CurvePoint>& curve) {
  std::ostringstream out;
  out << std::setprecision(10) << kHeader << '\n';
  for (const CurvePoint& p : curve)
    out << p.episodes << ',' << p.seconds << ',' << p.version << ',' << p.mean_ratio << ',' << p.best_ratio << ','
        << p.match << ',' << p.entropy << ',' << p.loss << ',' << p.episodes_per_second << '\n';
  return out.str();
}

Result<std::vector<CurvePoint>> learning_curve_from_csv(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader)
    return make_error(source + ": a learning curve starts with the line \"" + std::string(kHeader) + "\"");
  std::vector<CurvePoint> curve;
  for (int number = 2; std::getline(in, line); ++number) {
    double v[kColumns];
    if (!numbers(line, v) || v[0] < 0 || v[2] < 0)
      return make_error(source + ": line " + std::to_string(number) + " is not " + std::to_string(kColumns) +
                        " comma-separated finite numbers with counts >= 0");
    curve.push_back(CurvePoint{static_cast<long>(v[0]), v[1], static_cast<std::uint64_t>(v[2]), v[3], v[4], v[5], v[6], v[7], v[8]});
  }
  return curve;
}

}  // namespace gantry
