#pragma once
// Turns an executor's timed runs into a Measurement: the makespans in order, their median, minimum
// and maximum, and the run whose makespan is the median (the lower middle one for an even count).
#include <vector>

#include "executor/measurement.hpp"

namespace gantry {

void summarize_runs(std::vector<RunRecord> runs, Measurement* out);

}  // namespace gantry
