#pragma once
// A policy's forward pass in plain C++ on one graph, for rollouts: no autograd and no LibTorch
// per-call overhead. The encoder runs once, when the runner is built; what every step needs is
// cached per op (SEL logits, PLC's op terms), so a step costs a few small dot products per device.
// learner/policy_model.cpp computes the same functions with LibTorch for training (a test checks
// that both give the same probabilities).
#include <vector>

#include "core/graph.hpp"
#include "learner/graph_features.hpp"
#include "learner/policy_weights.hpp"
#include "learner/weight_columns.hpp"

namespace gantry {

class PolicyRunner {
 public:
  // `weights` and `features` must outlive the runner.
  PolicyRunner(const PolicyWeights& weights, const GraphFeatures& features, const Graph& graph);

  const PolicyConfig& config() const { return weights_.config; }
  int hidden() const { return config().hidden; }
  int head() const { return config().head; }
  int state() const { return config().state; }

  // SEL's score of each candidate (dual policies only) given describe_candidates()' features.
  void sel_logits(const std::vector<OpId>& candidates, const float* features, float* out) const;
  // W_s h_op: the op's share of a device's "ops already on it" summary (head floats).
  const float* summary_term(OpId op) const { return &summary_term_[static_cast<std::size_t>(op) * head()]; }
  // PLC's logit for each device: `features` [devices x kDeviceFeatures] from PlacementEnv, and
  // per device the sum of summary_term over the ops on it [devices x head] and their count.
  void plc_logits(OpId op, const float* features, const float* summary_sum, const int* counts, int devices,
                  float* out) const;
  // A GDP policy's device logits of `op` (config().devices floats).
  const float* gdp_logits(OpId op) const { return &gdp_logit_[static_cast<std::size_t>(op) * config().devices]; }

 private:
  void encode(const Graph& graph);
  void sel_head();
  void plc_terms();

  const PolicyWeights& weights_;
  const GraphFeatures& features_;
  std::vector<float> h_;
  std::vector<float> sel_static_, node_term_, summary_term_, gdp_logit_;
  // The per-step layers: SEL's candidate features, PLC's device features and its state part.
  WeightColumns sel_candidate_, plc_device_, plc_state_;
};

// LeakyReLU with DOPPLER's slope.
inline float leaky(float x) { return x > 0 ? x : 0.1f * x; }

}  // namespace gantry
