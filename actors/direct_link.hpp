#pragma once
// The in-process transport between one worker and a rollout pool: what a gateway pair does over
// ZeroMQ, without sockets (tests under CAF's deterministic scheduler use it). The worker's
// messages reach the pool under the peer name `peer`.
#include <caf/all.hpp>
#include <string>

namespace gantry {

caf::actor spawn_direct_link(caf::actor_system& system, caf::actor pool, caf::actor worker, std::string peer);

}  // namespace gantry
