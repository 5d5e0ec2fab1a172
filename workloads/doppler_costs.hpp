#pragma once
// DOPPLER's cost convention (the paper's graphs, `../shared/reference/doppler.md`): an op's compute
// cost is its multiply-adds and shipping its output to another device costs 4 times that, in
// abstract units, simulated with `--sim doppler`. Placement matters much more under it than under
// physical prices (a transfer outweighs its producer), which is what a learned placer trains on.
#include "core/graph.hpp"

namespace gantry {

// The same graph (ops, kinds, edges, names) with DOPPLER costs: contractions (matmul, attention)
// cost flops / 2 multiply-adds, every other op one per flop, and an op without flops (a gather, a
// formation that only moves data) one unit, so that nothing is free; comm = 4 x compute. Edge
// costs and bytes are cleared: the op's comm prices every transfer of its output.
Graph with_doppler_costs(const Graph& graph);

}  // namespace gantry
