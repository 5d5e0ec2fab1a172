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

  // Whether the episode can be an episode of a graph of `ops` ops on `devices` devices: every op
  // placed once, every index in range (what a learner checks before trusting a worker's episode).
  Status check(int ops, int devices) const;

  std::string to_bytes() const;
  static Result<Episode> from_bytes(const std::string& bytes, const std::string& source);
};

}  // namespace gantry
