#pragma once
// A policy's parameters as plain float arrays, named and shaped by policy_layout(): what the
// store keeps, what travels to rollout actors as bytes, and what the plain-C++ forward pass reads.
// No LibTorch here: workers run policies without it; the trainer converts to and from its modules.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "learner/policy_config.hpp"

namespace gantry {

struct WeightTensor {
  std::vector<std::int64_t> shape;  // row-major; a Linear's weight is [out, in] as in PyTorch
  std::vector<float> data;
};

struct TensorShape {
  std::string name;
  std::vector<std::int64_t> shape;
};

// Every parameter of a policy of this configuration, in a fixed order.
std::vector<TensorShape> policy_layout(const PolicyConfig& config);

struct PolicyWeights {
  PolicyConfig config;
  std::map<std::string, WeightTensor> tensors;

  // The tensor `name`; throws std::out_of_range naming it when absent (a layout bug, not input).
  const WeightTensor& at(const std::string& name) const;
  long parameter_count() const;

  // Self-describing MessagePack: format tag, version, configuration and every tensor as raw
  // little-endian float32. from_bytes checks the layout against the configuration and names
  // `source` and the first problem (a missing tensor, a wrong shape, a truncated array).
  std::string to_bytes() const;
  static Result<PolicyWeights> from_bytes(const std::string& bytes, const std::string& source);
};

}  // namespace gantry
