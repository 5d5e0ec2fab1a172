#pragma once
// A rollout actor anneals placements in batches on its own simulator. It is stateless between
// batches apart from its simulator cache: the problem and the chain's start come with every batch.
#include <caf/all.hpp>

namespace gantry {

// Serves (batch, shared_ptr<const BuiltProblem>, BatchRequest) -> BatchResult.
caf::behavior rollout_actor(caf::event_based_actor* self, int index);

}  // namespace gantry
