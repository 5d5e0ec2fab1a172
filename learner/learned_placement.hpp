#pragma once
// The learned placement method: one greedy episode of a DOPPLER policy (no training), registered
// as `doppler` with the built-in policy; `place --method doppler --policy P` passes another.
#include "learner/policy_weights.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

// Fails for a GDP policy made for another device count.
Result<PlacementOutcome> place_with_policy(const PolicyWeights& weights, const PlacementProblem& problem);

// The policy built into gantry (configs/policies/doppler-default.policy), or an error when this
// build has none.
Result<PolicyWeights> default_policy();

// Registers `doppler` with the placement-method registry (once; later calls do nothing).
void register_learned_methods();

}  // namespace gantry
