#include "learner/learning_curve.hpp"

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <sstream>

namespace gantry {
namespace {

constexpr const char* kHeader = "episodes,seconds,version,mean_ratio,best_ratio,match,entropy,loss,episodes_per_second";
constexpr int kColumns = 9;

// The comma-separated numbers of one line. A diverged run's loss or entropy may be nan or inf
// (the writer prints them as such); the counts (episodes, version) must be whole numbers.
bool numbers(const std::string& line, double* out) {
  const char* at = line.c_str();
  for (int k = 0; k < kColumns; ++k) {
    char* end = nullptr;
    out[k] = std::strtod(at, &end);
    if (end == at) return false;
    const bool count = k == 0 || k == 2;
    if (count && !(out[k] >= 0 && out[k] <= 1e15 && std::floor(out[k]) == out[k])) return false;
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
  const auto next_line = [&] {
    if (!std::getline(in, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
    return true;
  };
  if (!next_line() || line != kHeader)
    return make_error(source + ": a learning curve starts with the line \"" + std::string(kHeader) + "\"");
  std::vector<CurvePoint> curve;
  for (int number = 2; next_line(); ++number) {
    if (line.empty() && in.peek() == std::char_traits<char>::eof()) break;  // a blank last line
    double v[kColumns];
    if (!numbers(line, v))
      return make_error(source + ": line " + std::to_string(number) + " is not " + std::to_string(kColumns) +
                        " comma-separated numbers with whole counts >= 0 first and third");
    curve.push_back(CurvePoint{static_cast<long>(v[0]), v[1], static_cast<std::uint64_t>(v[2]), v[3], v[4], v[5], v[6], v[7], v[8]});
  }
  return curve;
}

}  // namespace gantry
