#pragma once
#include "sim/sim_result.hpp"

namespace gantry {

// Metrics that need the recorded timeline: exposed transfer time (the part of every transfer
// during which its receiving device runs nothing).
void add_timeline_metrics(SimResult& result);

}  // namespace gantry
