#pragma once
// Releases a thread the test holds at a hook (code under test waiting on `promise`'s future) when
// the test says, or when it leaves, failed checks included: a detached actor still waiting there
// would keep its actor system, and so the test binary, from ending. Declare it after the actor
// system (or the fixture holding it), so that it is destroyed, and releases, first.
#include <future>

namespace gantry::testing {

struct ReleaseOnExit {
  std::promise<void>& promise;
  bool done = false;
  void now() {
    if (done) return;
    promise.set_value();
    done = true;
  }
  ~ReleaseOnExit() { now(); }
};

}  // namespace gantry::testing
