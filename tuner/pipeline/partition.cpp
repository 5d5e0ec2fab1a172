#include "tuner/pipeline/partition.hpp"

#include <algorithm>
#include <limits>

namespace gantry {

namespace {
Status check(int layers, int stages) {
  if (stages < 1) return make_error("partition: need at least one stage");
  if (layers < stages)
    return make_error("partition: " + std::to_string(layers) + " layers cannot fill " + std::to_string(stages) +
                      " stages (every stage needs at least one layer)");
  return Ok{};
}
}  // namespace

Result<Partition> partition_uniform(int layers, int stages) {
  auto ok = check(layers, stages);
  if (!ok) return ok.error();
  Partition p;
  int first = 0;
  for (int s = 0; s < stages; ++s) {
    const int size = layers / stages + (s < layers % stages ? 1 : 0);
    p.emplace_back(first, first + size);
    first += size;
  }
  return p;
}

Result<Partition> partition_min_max(const std::vector<double>& weights, int stages) {
  if (stages < 1) return make_error("partition: need at least one stage");
  return partition_min_max_per_stage(std::vector<std::vector<double>>(stages, weights));
}

Result<Partition> partition_min_max_per_stage(const std::vector<std::vector<double>>& weights) {
  return partition_min_max_within(weights, {}, {});
}

Result<Partition> partition_min_max_within(const std::vector<std::vector<double>>& weights,
                                           const std::vector<std::vector<double>>& sizes,
                                           const std::vector<double>& capacity) {
  const int stages = static_cast<int>(weights.size());
  const int n = stages > 0 ? static_cast<int>(weights[0].size()) : 0;
  auto ok = check(n, stages);
  if (!ok) return ok.error();
  const bool budgeted = !capacity.empty() || !sizes.empty();
  if (budgeted && (static_cast<int>(sizes.size()) != stages || static_cast<int>(capacity.size()) != stages))
    return make_error("partition: " + std::to_string(sizes.size()) + " size lists and " +
                      std::to_string(capacity.size()) + " capacities for " + std::to_string(stages) + " stages");
  for (int k = 0; k < stages; ++k) {
    if (static_cast<int>(weights[k].size()) != n)
      return make_error("partition: stage " + std::to_string(k) + " weighs " + std::to_string(weights[k].size()) +
                        " layers, stage 0 weighs " + std::to_string(n));
    if (budgeted && static_cast<int>(sizes[k].size()) != n)
      return make_error("partition: stage " + std::to_string(k) + " sizes " + std::to_string(sizes[k].size()) +
                        " layers, stage 0 weighs " + std::to_string(n));
  }
  // prefix[k][i]: weight (size) of the first i layers on stage k.
  const auto prefix_sums = [&](const std::vector<std::vector<double>>& values) {
    std::vector<std::vector<double>> prefix(stages, std::vector<double>(n + 1, 0.0));
    for (int k = 0; k < stages; ++k)
      for (int i = 0; i < n; ++i) prefix[k][i + 1] = prefix[k][i] + values[k][i];
    return prefix;
  };
  const auto weight = prefix_sums(weights);
  const auto size = budgeted ? prefix_sums(sizes) : weight;
  const auto fits = [&](int k, int j, int i) { return !budgeted || size[k][i] - size[k][j] <= capacity[k]; };
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][i]: smallest possible max stage weight of the first i layers in k stages.
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> cut(stages + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k)
    for (int i = k; i <= n - (stages - k); ++i)
      for (int j = k - 1; j < i; ++j) {
        if (best[k - 1][j] == inf || !fits(k - 1, j, i)) continue;
        const double value = std::max(best[k - 1][j], weight[k - 1][i] - weight[k - 1][j]);
        if (value < best[k][i]) {
          best[k][i] = value;
          cut[k][i] = j;
        }
      }
  if (best[stages][n] == inf)
    return make_error(budgeted ? "partition: no partition fits every stage's capacity"
                               : "partition: the layer weights are not finite numbers");
  Partition p(stages);
  for (int k = stages, i = n; k >= 1; --k) {
    p[k - 1] = {cut[k][i], i};
    i = cut[k][i];
  }
  return p;
}

Status check_partition(const Partition& partition, int layers, int stages, const std::string& source) {
  const std::string field = source + ": partition";
  if (partition.empty())
    return make_error(field + ": empty, but a model needs the layer range of every stage (a scheme from --stages "
                      "has no partition)");
  if (static_cast<int>(partition.size()) != stages)
    return make_error(field + ": " + std::to_string(partition.size()) + " ranges for " + std::to_string(stages) +
                      " stages (placement)");
  for (int s = 0; s < stages; ++s) {
    const auto [first, end] = partition[s];
    const std::string at = field + "[" + std::to_string(s) + "]: [" + std::to_string(first) + ", " +
                           std::to_string(end) + ")";
    const int expected = s == 0 ? 0 : partition[s - 1].second;
    if (first != expected)
      return make_error(at + " starts at layer " + std::to_string(first) + ", expected " + std::to_string(expected) +
                        (s == 0 ? " (the first stage starts at layer 0)" : " (stages must be consecutive)"));
    if (end <= first) return make_error(at + " is empty (every stage needs at least one layer)");
    if (end > layers)
      return make_error(at + " ends beyond the model's " + std::to_string(layers) + " layers");
  }
  if (partition.back().second != layers)
    return make_error(field + ": covers layers [0, " + std::to_string(partition.back().second) + ") but the model has " +
                      std::to_string(layers) + " layers");
  return Ok{};
}

}  // namespace gantry
