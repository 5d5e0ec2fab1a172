#pragma once
// A measured run in the simulator's result form, so everything that reads a simulated timeline
// (Chrome traces, SVG Gantt charts, busy and transfer metrics) reads a measured one the same way.
#include "executor/measurement.hpp"
#include "sim/sim_result.hpp"

namespace gantry {

SimResult measured_timeline(const RunRecord& run, int devices);

}  // namespace gantry
