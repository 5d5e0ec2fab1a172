#pragma once
// A training run's learning curve as CSV or as an SVG line chart (by the file's extension).
#include <string>
#include <vector>

#include "learner/trainer.hpp"

namespace gantry::cli {

// Throws CliError unless `path` is empty or names a curve file this writes (.csv or .svg): checked
// before a long run.
void check_curve_path(const std::string& path);

// Throws CliError when the file cannot be written or has another extension.
void write_learning_curve(const std::string& path, const std::vector<CurvePoint>& curve, const std::string& title);

}  // namespace gantry::cli
