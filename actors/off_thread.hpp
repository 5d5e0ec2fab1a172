#pragma once
// Work too long for an actor's turn (building a job's problem from a large graph: 20-30 s for a
// million ops here) on a thread of its own. A node runs its message actors on one scheduler thread:
// work done there in an actor's turn stalls them all (the pool's heartbeats, every reply, a
// worker's heartbeats), and workers that miss three heartbeats are taken for gone.
#include <caf/all.hpp>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/messages.hpp"
#include "core/result.hpp"

namespace gantry {

// A detached actor that runs `work` when it gets start_atom, answers true, and quits. The actor
// system waits for it at shutdown, so `work` may use what lives as long as the system.
caf::actor spawn_off_thread(caf::actor_system& system, std::function<void()> work);

// Whether `system` runs under CAF's test scheduler, which has no threads (deterministic tests):
// its work runs in the actor's turn.
bool runs_in_turn(caf::actor_system& system);

// Runs `work` on a thread of its own, then `then` with its result in `self`'s turn (on its thread,
// with its state). When no thread can be had, `then` gets the error.
template <class T>
void off_thread(caf::event_based_actor* self, std::function<Result<T>()> work, std::function<void(Result<T>)> then) {
  if (runs_in_turn(self->system())) return then(work());
  auto result = std::make_shared<std::optional<Result<T>>>();
  caf::actor runner;
  try {
    runner = spawn_off_thread(self->system(), [result, work] { result->emplace(work()); });
  } catch (const std::exception& e) {  // ulimit -u, memory
    return then(make_error(std::string("no thread for the work: ") + e.what()));
  }
  self->request(runner, caf::infinite, start_atom::value)
      .then([=](bool) { then(std::move(**result)); },
            [=](const caf::error& e) { then(make_error(error_text(self->system(), e))); });
}

}  // namespace gantry
