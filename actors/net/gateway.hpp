#pragma once
// A process's gateway: a detached actor that owns its ZeroMQ socket (sockets are not thread-safe,
// so no other thread touches it). A coordinator's gateway binds a ROUTER; a worker's connects a
// DEALER with a stable identity. Arriving messages are checked frame by frame and handed on as
// (net_in, Envelope): to the rollout pool (worker messages) or the coordinator (client requests)
// or, on a worker, to the worker actor. Anything else is counted, logged and dropped. Actors send
// through it with (net_out, Envelope); a send that would block (a slow or gone peer) is dropped,
// never waited for, and a gone peer is reported to the pool as (lost, peer).
//
// Also: (status) -> GatewayCounters: messages dropped as malformed, connections refused by CURVE,
// sends dropped because a peer's queue was full.
#include <caf/all.hpp>
#include <string>

#include "actors/net/curve_keys.hpp"
#include "core/result.hpp"

namespace gantry {

struct GatewayOptions {
  bool bind = true;            // ROUTER bound to `endpoint`; else DEALER connected to it
  std::string endpoint;        // tcp://HOST:PORT (port 0 or * = any free port), inproc://NAME
  std::string identity;        // the DEALER's routing identity (stable across reconnects)
  caf::actor workers;          // bind: hello, heartbeat, done, need_problem, bye
  caf::actor clients;          // bind: submit, status, cancel, jobs
  caf::actor sink;             // connect: everything the coordinator sends
  int high_water_mark = 100000;  // messages queued per peer before sends to it are dropped
  // CURVE: a bound gateway accepts only `curve.authorized` keys (checked by its ZAP handler) and
  // encrypts; a connecting one authenticates with `curve.own` to `curve.server_public_key`.
  CurveSettings curve;
};

struct Gateway {
  caf::actor actor;
  std::string endpoint;        // as bound (the actual port for port 0)
};

// Binds or connects first, so a bad endpoint is an error here (naming it), not a dead thread.
Result<Gateway> spawn_gateway(caf::actor_system& system, const GatewayOptions& options);

// Whether an endpoint is reachable only from this host (loopback, inproc, ipc).
bool is_local_endpoint(const std::string& endpoint);
// tcp://HOST:PORT (PORT 0 to 65535, or *), ipc://PATH or inproc://NAME; the error says what is wrong
// (ZeroMQ itself takes port 99999 as 34463, and names a bad transport "No such device").
Status check_endpoint(const std::string& endpoint);

}  // namespace gantry
