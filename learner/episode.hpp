#pragma once
// One placement episode as a rollout records it: enough for the learner to recompute every
// step's log-probability under newer weights (the candidates, the device features, the actions),
// the teacher's choices at each visited state, and how it scored.
#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"
#include "learner/policy_config.hpp"

namespace gantry {

struct Episode {
  std::uint64_t version = 0;  // the policy version that generated it
  int problem = 0;            // which of the trainer's graphs
  int devices = 0;
  std::vector<OpId> ops;            // step -> op placed
  std::vector<std::int32_t> device; // step -> its device
  // Per step, packed: the candidates SEL chose from (empty for policies without SEL) and the
  // teacher's ops and devices (CSR: step t's items are [offsets[t], offsets[t + 1])).
  std::vector<std::int32_t> candidate_offsets, candidates;
  std::vector<std::int32_t> teacher_op_offsets, teacher_ops;
  std::vector<std::int32_t> teacher_device_offsets, teacher_devices;
  std::vector<float> candidate_features;  // [candidates (packed as above) x kCandidateFeatures] (dual)
  std::vector<float> device_features;  // [steps x devices x kDeviceFeatures]
  std::vector<float> behaviour_logp;   // log-probability of each step's action when it was taken
  int sel_matches = 0, plc_matches = 0;  // steps where the policy's argmax is a teacher choice
  double makespan = 0;                   // simulated
  double planned = 0;                    // the episode's own list-schedule length

  int steps() const { return static_cast<int>(ops.size()); }
  Placement placement(const std::vector<double>& priority = {}) const;

  // Whether the episode can be an episode of a `ablation` policy on `graph` and `devices` devices:
  // every op once in a topological order, every index in range, every per-step list present and
  // holding its step's choice, every number finite (what a learner checks before it trusts a
  // worker's episode: the LibTorch pass and the replay index with them).
  Status check(const Graph& graph, int devices, Ablation ablation) const;

  std::string to_bytes() const;
  static Result<Episode> from_bytes(const std::string& bytes, const std::string& source);
};

}  // namespace gantry
