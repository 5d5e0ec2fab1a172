#pragma once
// A blocking question to the store actor from a job's own thread (a learner, the pipeline
// co-tuner): its answer, or why there is none.
#include <caf/all.hpp>
#include <utility>

#include "actors/messages.hpp"
#include "core/result.hpp"

namespace gantry {

template <class Answer, class... Message>
Result<Answer> ask_store(caf::scoped_actor& self, const caf::actor& store, Message&&... message) {
  Result<Answer> out = make_error("the store did not answer");
  self->request(store, kStoreTimeout, std::forward<Message>(message)...)
      .receive([&](const Answer& answer) { out = answer; },
               [&](const caf::error& e) { out = make_error("the store failed: " + error_text(self->system(), e)); });
  return out;
}

}  // namespace gantry
