#pragma once
// A training run's learning curve as CSV or as an SVG line chart (by the file's extension).
#include <string>
#include <vector>

#include "learner/trainer.hpp"

namespace gantry::cli {

// Whether `path` names a curve file this writes (.csv or .svg).
bool is_learning_curve_path(const std::string& path);

// Throws CliError when the file cannot be written or has another extension.
void write_learning_curve(const std::string& path, const std::vector<CurvePoint>& curve, const std::string& title);

}  // namespace gantry::cli
