#include "actors/direct_link.hpp"

#include "actors/messages.hpp"

namespace gantry {

namespace {

caf::behavior direct_link(caf::event_based_actor* self, caf::actor pool, caf::actor worker, std::string peer) {
  return {
      [=](net_out_atom, wire::Envelope e) {
        if (caf::actor_cast<caf::actor_addr>(self->current_sender()) == worker.address()) {
          e.peer = peer;
          self->send(pool, net_in_atom::value, std::move(e));
        } else {
          e.peer.clear();
          self->send(worker, net_in_atom::value, std::move(e));
        }
      },
  };
}

}  // namespace

caf::actor spawn_direct_link(caf::actor_system& system, caf::actor pool, caf::actor worker, std::string peer) {
  return system.spawn(direct_link, std::move(pool), std::move(worker), std::move(peer));
}

}  // namespace gantry
