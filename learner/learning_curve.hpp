#pragma once
// A training run's learning curve as CSV text: what `--curve FILE.csv` writes and what the store
// keeps with the policy the run trained (so a curve can be fetched from a coordinator later).
#include <string>
#include <vector>

#include "core/result.hpp"
#include "learner/trainer.hpp"

namespace gantry {

// A header line, then one line per point (its numbers to 10 significant digits).
std::string learning_curve_csv(const std::vector<CurvePoint>& curve);
// The points of learning_curve_csv's text; an error names `source` and the line that is wrong.
Result<std::vector<CurvePoint>> learning_curve_from_csv(const std::string& text, const std::string& source);

}  // namespace gantry
