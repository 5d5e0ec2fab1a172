#pragma once
// A client's request to a coordinator: one DEALER socket, one request, one reply (or a timeout
// naming the endpoint). Short-lived commands (submit, jobs, status, cancel) have no actor system,
// so this socket is theirs alone, on the calling thread.
#include <string>

#include "actors/net/wire.hpp"
#include "core/result.hpp"

namespace gantry {

// Sends `request` as a message of `type` and waits up to `timeout_seconds` for its reply. A reply
// with ok == false comes back as an error carrying the coordinator's message.
Result<wire::Reply> call_coordinator(const std::string& endpoint, wire::Type type, wire::Request request,
                                     double timeout_seconds = 10);

}  // namespace gantry
