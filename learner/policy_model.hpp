#pragma once
// The trainable policy: the same functions as the plain-C++ PolicyRunner, in LibTorch, with
// autograd and an Adam optimizer. It recomputes the log-probabilities of whole batches of recorded
// episodes (one encoder pass per graph per update) and takes gradient steps on the imitation,
// policy-gradient and entropy terms. LibTorch stays inside policy_model.cpp (pimpl).
#include <cstdint>
#include <memory>
#include <vector>

#include "core/graph.hpp"
#include "learner/episode.hpp"
#include "learner/graph_features.hpp"
#include "learner/policy_weights.hpp"

namespace gantry {

struct Objective {
  double imitation = 0;  // weight of -log(sum of the policy's probabilities of the teacher's choices)
  double policy = 0;     // weight of the policy-gradient term -A * log pi(action)
  double entropy = 0;    // weight of the entropy bonus
  double clip = 1.0;     // gradient norm clipping (0 = none)
  // Imitation targets: every tied teacher choice (multi-label), or only the teacher's own pick
  // (its tie-break: the lowest op id, the lowest device index), which place_critical_path follows.
  bool all_ties = true;
};

// Episodes of one graph with their advantages (policy gradient); an episode's steps are weighted
// by min(1, pi / behaviour) so that stale or epsilon-mixed actions count no more than the current
// policy would take them.
struct GraphBatch {
  const Graph* graph = nullptr;
  const GraphFeatures* features = nullptr;
  std::vector<const Episode*> episodes;
  std::vector<double> advantages;  // one per episode (ignored when Objective::policy == 0)
};

struct LossReport {
  double loss = 0;
  double imitation = 0;  // mean per step of the imitation term (0 when not computed)
  double entropy = 0;    // mean per step entropy of the policy's choices (nats)
  double grad_norm = 0;  // before clipping
};

// Threads LibTorch's kernels may use in this process (1 where rollout threads share the cores).
void set_training_threads(int threads);

class PolicyModel {
 public:
  // Fresh weights: orthogonal matrices and zero biases, from torch's generator seeded with `seed`.
  PolicyModel(const PolicyConfig& config, std::uint64_t seed);
  explicit PolicyModel(const PolicyWeights& weights);
  ~PolicyModel();
  PolicyModel(PolicyModel&&) noexcept;
  PolicyModel& operator=(PolicyModel&&) noexcept;

  const PolicyConfig& config() const;
  PolicyWeights weights() const;
  void load(const PolicyWeights& weights);  // same configuration
  void set_learning_rate(double lr);
  double learning_rate() const;

  // One optimizer step on the mean loss over the batches; the report is of the loss before it.
  LossReport update(const std::vector<GraphBatch>& batches, const Objective& objective);
  // The same loss without a step.
  LossReport evaluate(const std::vector<GraphBatch>& batches, const Objective& objective);
  // log pi(action) of every step of `episode` under the current weights (SEL + PLC).
  std::vector<double> step_log_probs(const Graph& graph, const GraphFeatures& features, const Episode& episode);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gantry
