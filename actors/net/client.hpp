#pragma once
// A client's request to a coordinator: one DEALER socket, one request, one reply (or a timeout
// naming the endpoint). Short-lived commands (submit, jobs, status, cancel) have no actor system,
// so this socket is theirs alone, on the calling thread.
#include <functional>
#include <string>

#include "actors/net/curve_keys.hpp"
#include "actors/net/wire.hpp"
#include "core/result.hpp"

namespace gantry {

struct ClientOptions {
  std::string endpoint;
  double timeout_seconds = 10;
  CurveSettings curve;  // own key pair and the coordinator's public key, when it requires CURVE
};

// Sends `request` as a message of `type` and waits for its reply. A reply with ok == false comes
// back as an error carrying the coordinator's message.
Result<wire::Reply> call_coordinator(const ClientOptions& options, wire::Type type, wire::Request request);

// A submit, sent again with the same key when no reply came (the coordinator may have recorded the
// job and its reply been lost), once the coordinator answers a status saying it knows submit keys:
// it answers a key it has seen with that job, so the job runs once however many times it was
// sent. A reply, even a refusal, is final. `on_retry` hears each new attempt. The request's key is
// made here when it has none.
Result<wire::Reply> submit_to_coordinator(const ClientOptions& options, wire::Request request, int attempts = 3,
                                          const std::function<void(const std::string&)>& on_retry = {});

}  // namespace gantry
