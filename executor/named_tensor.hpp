#pragma once
// The values of a named graph tensor (a parameter or a graph input, core/operation.hpp): a pure
// function of its name, element count, scale and integer flag, computed by hand (splitmix64 and
// Box-Muller) so that every process, library version and machine rebuilds the same tensor.
#include <cstdint>
#include <string>
#include <vector>

namespace gantry {

// `count` values: normal with standard deviation `scale`, or integers uniform in [0, scale) when
// `integer` (token ids; exact in float up to 2^24).
std::vector<float> named_tensor_values(const std::string& name, std::int64_t count, double scale, bool integer);

}  // namespace gantry
