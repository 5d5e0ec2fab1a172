#pragma once
// A rollout actor owns one simulator (through a LocalSearch) and anneals placements in batches.
#include <caf/all.hpp>

#include "tuner/placement_method.hpp"

namespace gantry {

// Serves batch (BatchRequest) -> BatchResult. `problem` must outlive the actor.
caf::behavior rollout_actor(caf::event_based_actor* self, const PlacementProblem* problem, int index);

}  // namespace gantry
