#include "actors/blocking_job.hpp"

#include "actors/messages.hpp"

namespace gantry {

namespace {

caf::behavior blocking_job(caf::event_based_actor* self, std::function<TuneOutcome()> run,
                           std::shared_ptr<std::atomic<bool>> stop) {
  return {
      [=](start_atom) -> TuneOutcome {
        TuneOutcome outcome = run();
        self->quit();
        return outcome;
      },
      [=](cancel_atom) { stop->store(true); },  // read after the run; the flag is what stops it
  };
}

}  // namespace

caf::actor spawn_blocking_job(caf::actor_system& system, std::function<TuneOutcome()> run,
                              std::shared_ptr<std::atomic<bool>> stop) {
  return system.spawn<caf::detached>(blocking_job, std::move(run), std::move(stop));
}

}  // namespace gantry
