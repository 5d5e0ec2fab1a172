#pragma once
// Static list-scheduling priorities: the upward rank (bottom level) of HEFT and of the DOPPLER
// critical-path teacher, with each op's mean time over devices and each edge's mean transfer time.
#include <vector>

#include "core/cost_model.hpp"
#include "core/graph.hpp"

namespace gantry {

std::vector<double> upward_ranks(const Graph& graph, const CostTable& costs);

// Ops in decreasing `key`, ties in topological order: the order of a list schedule by that key.
std::vector<OpId> order_by_decreasing(const Graph& graph, const std::vector<double>& key);

}  // namespace gantry
