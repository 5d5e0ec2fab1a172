#pragma once
// Partitions of consecutive layers into stages: [first, end) per stage.
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace gantry {

using Partition = std::vector<std::pair<int, int>>;

// Equal layer counts; the first stages take one more when it does not divide.
Result<Partition> partition_uniform(int layers, int stages);
// Contiguous stages minimising the largest stage weight (parameters for "params", F+B+W time for
// "compute"); exact, by dynamic programming over split points.
Result<Partition> partition_min_max(const std::vector<double>& weights, int stages);
// The same when a layer weighs differently on each stage (its F+B+W time on the stage's device):
// weights[s][i] is layer i's weight on stage s; every stage lists every layer.
Result<Partition> partition_min_max_per_stage(const std::vector<std::vector<double>>& weights);
// The same within a budget per stage: stage s may hold layers [j, i) only when the sizes
// sizes[s][j] + ... + sizes[s][i - 1] add up to at most capacity[s] (memory; infinity: no
// limit, 0: only layers of size 0 fit); an error when no partition fits. Both empty: no budget.
Result<Partition> partition_min_max_within(const std::vector<std::vector<double>>& weights,
                                           const std::vector<std::vector<double>>& sizes,
                                           const std::vector<double>& capacity);
// A partition read from `source`: `stages` non-empty, consecutive ranges covering layers [0, layers).
Status check_partition(const Partition& partition, int layers, int stages, const std::string& source);

}  // namespace gantry
