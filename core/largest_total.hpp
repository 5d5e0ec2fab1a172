#pragma once
// The most any quantity of a problem may add up to: a graph's flops, bytes, costs or memory over
// its ops or edges, a pipeline's over its tasks. The simulators add them up (and scale them by
// rates); a sum past the largest double is inf, which made makespans of inf and ratios of nan.

namespace gantry {

inline constexpr double kLargestTotal = 1e300;

}  // namespace gantry
