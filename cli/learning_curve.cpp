#include "cli/learning_curve.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "cli/cli_common.hpp"
#include "core/json_util.hpp"
#include "core/text.hpp"
#include "learner/learning_curve.hpp"

namespace gantry::cli {

namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

// Makespan / teacher makespan (mean and best) against episodes, with the teacher at 1.
std::string svg(const std::vector<CurvePoint>& curve, const std::string& title) {
  const double w = 720, h = 360, left = 60, right = 20, top = 40, bottom = 40;
  double lo = 1, hi = 1, last = 1;
  for (const CurvePoint& p : curve) {
    lo = std::min({lo, p.mean_ratio, p.best_ratio});
    hi = std::max({hi, p.mean_ratio, p.best_ratio});
    last = std::max(last, static_cast<double>(p.episodes));
  }
  const double pad = (hi - lo) * 0.05 + 1e-9;
  lo -= pad;
  hi += pad;
  auto x = [&](double e) { return left + (w - left - right) * e / last; };
  auto y = [&](double r) { return top + (h - top - bottom) * (hi - r) / (hi - lo); };
  std::ostringstream out;
  char buf[160];
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\">" << escape(title) << "</text>\n";
  for (int k = 0; k <= 4; ++k) {
    const double r = lo + (hi - lo) * k / 4;
    std::snprintf(buf, sizeof buf, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%.3f</text>\n", left, w - right, y(r), y(r), left - 6, y(r) + 4, r);
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "<line x1=\"%g\" x2=\"%g\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>"
                "<text x=\"%g\" y=\"%.1f\" fill=\"#888\">teacher (critical path)</text>\n", left, w - right, y(1), y(1), left + 4, y(1) - 4);
  out << buf;
  auto line = [&](double CurvePoint::*field, const char* color, const char* name, int row) {
    out << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (const CurvePoint& p : curve) out << x(static_cast<double>(p.episodes)) << ',' << y(p.*field) << ' ';
    out << "\"/>\n<text x=\"" << w - right - 150 << "\" y=\"" << top + 14 * row << "\" fill=\"" << color << "\">" << name << "</text>\n";
  };
  line(&CurvePoint::mean_ratio, "#1f77b4", "mean sampled / teacher", 1);
  line(&CurvePoint::best_ratio, "#d62728", "best so far / teacher", 2);
  std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">episodes (0 .. %.0f)</text>\n",
                (left + w - right) / 2, h - 10, last);
  out << buf << "</svg>\n";
  return out.str();
}

}  // namespace

void check_curve_path(const std::string& path) {
  if (!path.empty() && !ends_with(path, ".csv") && !ends_with(path, ".svg"))
    throw CliError("--curve " + path + ": the file must end in .csv or .svg");
}

void write_learning_curve(const std::string& path, const std::vector<CurvePoint>& curve, const std::string& title) {
  check_curve_path(path);
  const std::string text = ends_with(path, ".csv") ? learning_curve_csv(curve) : svg(curve, title);
  if (Status written = write_text_file(path, text); !written) throw CliError("--curve: " + written.error().message);
}

}  // namespace gantry::cli
