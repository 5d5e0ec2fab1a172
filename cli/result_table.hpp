#pragma once
// How placement results are shown: a comparison table or JSON (method, makespan, lower_bound,
// placement, per-device utilization, transfers).
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "cli/cli_common.hpp"
#include "tuner/placement_method.hpp"

namespace gantry::cli {

struct MethodRow {
  PlacementOutcome outcome;
  SimResult result;  // re-simulated with metrics
};

nlohmann::json method_json(const Problem& problem, const MethodRow& row, double lower_bound);
// One row -> an object; several -> an array of objects.
nlohmann::json methods_json(const Problem& problem, const std::vector<MethodRow>& rows, double lower_bound);
void print_methods_table(std::ostream& out, const Problem& problem, const std::vector<MethodRow>& rows, double lower_bound);

}  // namespace gantry::cli
