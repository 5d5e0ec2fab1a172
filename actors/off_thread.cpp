#include "actors/off_thread.hpp"

#include <caf/scheduler/test_coordinator.hpp>

#include "actors/messages.hpp"

namespace gantry {

namespace {

caf::behavior off_thread_actor(caf::event_based_actor* self, std::function<void()> work) {
  return {
      [=](start_atom) {
        work();
        self->quit();
        return true;
      },
  };
}

}  // namespace

bool runs_in_turn(caf::actor_system& system) {
  return dynamic_cast<caf::scheduler::test_coordinator*>(&system.scheduler()) != nullptr;
}

caf::actor spawn_off_thread(caf::actor_system& system, std::function<void()> work) {
  return system.spawn<caf::detached>(off_thread_actor, std::move(work));
}

}  // namespace gantry
