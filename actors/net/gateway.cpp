#include "actors/net/gateway.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "actors/log_line.hpp"
#include "actors/rate_limited_log.hpp"
#include "actors/messages.hpp"

namespace gantry {

namespace {

// One ZeroMQ context per process: inproc:// endpoints only meet within one context.
zmq::context_t& context() {
  static zmq::context_t ctx{1};
  return ctx;
}

bool for_workers(wire::Type t) {
  return t == wire::Type::hello || t == wire::Type::heartbeat || t == wire::Type::done ||
         t == wire::Type::need_problem || t == wire::Type::bye;
}

bool for_clients(wire::Type t) {
  return t == wire::Type::submit || t == wire::Type::status || t == wire::Type::cancel || t == wire::Type::jobs ||
         t == wire::Type::query;
}

// ZeroMQ's authentication protocol (ZAP, RFC 27): the library asks this socket, in the same
// context, whether a connecting peer's CURVE public key may in.
constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

// What the gateway's two threads share: counters the outbox reports, and the stop flag it sets.
struct Shared {
  std::atomic<long> malformed{0}, refused{0}, dropped_out{0};
  std::atomic<bool> stop{false};
};

// The socket thread: blocks in one zmq::poll over the network socket, the outbox's inproc socket
// and (CURVE) the ZAP socket, so it wakes the moment either side has something: no polling delay
// between an actor's send and the wire, nor between the wire and an actor.
struct Loop {
  GatewayOptions options;
  std::shared_ptr<zmq::socket_t> socket;
  std::shared_ptr<zmq::socket_t> zap;     // bound gateways with CURVE only
  std::shared_ptr<zmq::socket_t> outbox;  // PULL: what actors asked the gateway to send
  std::shared_ptr<Shared> shared;
  caf::actor face;  // the outbox: what receivers see as the sender, and answer to
  RateLimitedLog log;  // drops and refusals: at most a line a second

  void drop(const std::string& peer, const std::string& why) {
    log.note("dropped a message" + (peer.empty() ? std::string() : " from " + peer) + ": " + why, ++shared->malformed);
  }

  void deliver(std::vector<zmq::message_t>& frames) {
    const std::size_t head = options.bind ? 1 : 0;
    std::string peer = options.bind && !frames.empty() ? frames[0].to_string() : "";
    if (frames.size() != head + 3) return drop(peer, std::to_string(frames.size()) + " frames, expected " + std::to_string(head + 3));
    auto type = wire::parse_header(frames[head].to_string_view(), frames[head + 1].to_string_view());
    if (!type) return drop(peer, type.error().message);
    if (frames[head + 2].size() > wire::kMaxPayloadBytes) return drop(peer, "payload over the size limit");
    wire::Envelope e{std::move(peer), type.value(), frames[head + 2].to_string()};
    if (!options.bind) return caf::send_as(face, options.sink, net_in_atom::value, std::move(e));
    if (for_workers(e.type)) return caf::send_as(face, options.workers, net_in_atom::value, std::move(e));
    if (for_clients(e.type)) return caf::send_as(face, options.clients, net_in_atom::value, std::move(e));
    drop(e.peer, std::string("a ") + wire::to_string(e.type) + " message is not for a coordinator");
  }

  void send(const wire::Envelope& e) {
    const std::uint8_t header[2] = {wire::kProtocolVersion, static_cast<std::uint8_t>(e.type)};
    try {
      bool sent;
      if (options.bind) {
        std::array<zmq::const_buffer, 4> frames{zmq::buffer(e.peer), zmq::buffer(header, 1), zmq::buffer(header + 1, 1),
                                                zmq::buffer(e.payload)};
        sent = zmq::send_multipart(*socket, frames, zmq::send_flags::dontwait).has_value();
      } else {
        std::array<zmq::const_buffer, 3> frames{zmq::buffer(header, 1), zmq::buffer(header + 1, 1), zmq::buffer(e.payload)};
        sent = zmq::send_multipart(*socket, frames, zmq::send_flags::dontwait).has_value();
      }
      if (!sent) ++shared->dropped_out;  // its queue is full: a slow peer loses messages, nobody waits for it
    } catch (const zmq::error_t& err) {
      if (err.num() == EHOSTUNREACH && options.bind && options.workers)
        caf::send_as(face, options.workers, lost_atom::value, e.peer);
      else
        log_line(std::string() + "gantry: cannot send a " + wire::to_string(e.type) + " message: " + err.what());
    }
  }

  // Answers one ZAP request: 200 for an authorized key, 400 for anything else.
  void authenticate() {
    std::vector<zmq::message_t> request;
    if (!zmq::recv_multipart(*zap, std::back_inserter(request), zmq::recv_flags::dontwait)) return;
    if (request.size() < 6) return;  // not ZAP: nothing sensible to answer
    const std::string version = request[0].to_string(), id = request[1].to_string(), mechanism = request[5].to_string();
    bool ok = false;
    if (mechanism == "CURVE" && request.size() >= 7 && request[6].size() == 32) {
      char z85[41];
      zmq_z85_encode(z85, static_cast<const std::uint8_t*>(request[6].data()), 32);
      for (const std::string& key : options.curve.authorized) ok = ok || key == z85;
    }
    if (!ok) {
      log.note("refused a connection from " + request[3].to_string() + " without an authorized CURVE key", ++shared->refused);
    }
    const std::string code = ok ? "200" : "400", text = ok ? "OK" : "not an authorized key";
    std::array<zmq::const_buffer, 6> reply{zmq::buffer(version), zmq::buffer(id), zmq::buffer(code), zmq::buffer(text),
                                           zmq::buffer(std::string_view()), zmq::buffer(std::string_view())};
    zmq::send_multipart(*zap, reply);
  }

  void run() {
    while (!shared->stop.load()) {
      zmq::pollitem_t items[] = {{socket->handle(), 0, ZMQ_POLLIN, 0},
                                 {outbox->handle(), 0, ZMQ_POLLIN, 0},
                                 {zap ? zap->handle() : nullptr, 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, zap ? 3 : 2, std::chrono::milliseconds(100));  // the timeout only notices `stop`
      if (zap && (items[2].revents & ZMQ_POLLIN)) authenticate();
      for (int n = 0; n < 4096; ++n) {  // what has arrived, a bounded amount per turn
        std::vector<zmq::message_t> frames;
        if (!zmq::recv_multipart(*socket, std::back_inserter(frames), zmq::recv_flags::dontwait)) break;
        deliver(frames);
      }
      for (int n = 0; n < 4096; ++n) {  // what actors asked to send: [peer] [type] [payload]
        std::vector<zmq::message_t> out;
        if (!zmq::recv_multipart(*outbox, std::back_inserter(out), zmq::recv_flags::dontwait)) break;
        if (out.size() != 3 || out[1].size() != 1) continue;
        send(wire::Envelope{out[0].to_string(), static_cast<wire::Type>(*out[1].data<std::uint8_t>()), out[2].to_string()});
      }
    }
  }
};

void socket_thread(caf::blocking_actor*, GatewayOptions options, std::shared_ptr<zmq::socket_t> socket,
                   std::shared_ptr<zmq::socket_t> zap, std::shared_ptr<zmq::socket_t> outbox, std::shared_ptr<Shared> shared,
                   caf::actor face) {
  Loop loop{std::move(options), std::move(socket), std::move(zap), std::move(outbox), std::move(shared), std::move(face), {}};
  loop.run();
  loop.socket->close();
  loop.outbox->close();
  if (loop.zap) loop.zap->close();
}

// The gateway's face to actors: it blocks on its mailbox and hands every send to the socket
// thread over inproc (a ZeroMQ socket belongs to one thread, so actors cannot touch the network
// socket themselves).
void outbox_actor(caf::blocking_actor* self, std::shared_ptr<zmq::socket_t> push, std::shared_ptr<Shared> shared) {
  for (bool running = true; running;)
    self->receive(
        [&](net_out_atom, const wire::Envelope& e) {
          const std::uint8_t type = static_cast<std::uint8_t>(e.type);
          std::array<zmq::const_buffer, 3> frames{zmq::buffer(e.peer), zmq::buffer(&type, 1), zmq::buffer(e.payload)};
          zmq::send_multipart(*push, frames);
        },
        [&](status_atom) { return GatewayCounters{shared->malformed.load(), shared->refused.load(), shared->dropped_out.load()}; },
        [&](caf::exit_msg&) { running = false; });
  shared->stop = true;
  push->close();
}

}  // namespace

bool is_local_endpoint(const std::string& endpoint) {
  for (const char* prefix : {"inproc://", "ipc://", "tcp://127.", "tcp://localhost:", "tcp://[::1]:"})
    if (endpoint.rfind(prefix, 0) == 0) return true;
  return false;
}

Status check_endpoint(const std::string& endpoint) {
  const auto bad = [&](const std::string& why) { return make_error("endpoint '" + endpoint + "': " + why); };
  for (const char* prefix : {"ipc://", "inproc://"})
    if (endpoint.rfind(prefix, 0) == 0)
      return endpoint.size() > std::string(prefix).size() ? Status(Ok{}) : bad("no name after " + std::string(prefix));
  if (endpoint.rfind("tcp://", 0) != 0) return bad("expected tcp://HOST:PORT, ipc://PATH or inproc://NAME");
  const auto colon = endpoint.rfind(':');
  if (colon < 6) return bad("expected tcp://HOST:PORT");
  const std::string host = endpoint.substr(6, colon - 6), port = endpoint.substr(colon + 1);
  if (host.empty()) return bad("no host before the port");
  if (port == "*") return Ok{};
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stol(port) > 65535)
    return bad("the port must be a number from 0 to 65535, or *");
  return Ok{};
}

Result<Gateway> spawn_gateway(caf::actor_system& system, const GatewayOptions& options) {
  if (Status ok = check_endpoint(options.endpoint); !ok) return ok.error();
  auto socket = std::make_shared<zmq::socket_t>(context(), options.bind ? zmq::socket_type::router : zmq::socket_type::dealer);
  std::shared_ptr<zmq::socket_t> zap;
  std::string endpoint = options.endpoint;
  try {
    if (options.curve.enabled && options.bind) {
      zap = std::make_shared<zmq::socket_t>(context(), zmq::socket_type::rep);
      zap->set(zmq::sockopt::linger, 0);
      zap->bind(kZapEndpoint);  // before the server socket, so no connection slips past it
      socket->set(zmq::sockopt::zap_domain, "gantry");
      socket->set(zmq::sockopt::curve_server, 1);
      socket->set(zmq::sockopt::curve_secretkey, options.curve.own.secret_key);
    } else if (options.curve.enabled) {
      socket->set(zmq::sockopt::curve_serverkey, options.curve.server_public_key);
      socket->set(zmq::sockopt::curve_publickey, options.curve.own.public_key);
      socket->set(zmq::sockopt::curve_secretkey, options.curve.own.secret_key);
    }
    socket->set(zmq::sockopt::linger, 0);
    socket->set(zmq::sockopt::sndhwm, options.high_water_mark);
    socket->set(zmq::sockopt::rcvhwm, options.high_water_mark);
    socket->set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(wire::kMaxPayloadBytes + 1024));
    if (!options.bind) {
      // ZMTP pings keep an idle connection to the coordinator honest: a worker or client whose
      // coordinator went silent reconnects. Only the connecting side pings (the coordinator still
      // answers): libzmq 4.3.4 aborts the whole process (stream_engine_base.cpp:331, "!_io_error")
      // when a ROUTER with heartbeats hands a routing id over between connections, which any
      // peer that reuses a worker's name could cause. The coordinator has its own heartbeats for
      // workers (actors/rollout_pool.cpp) and needs no pings to find them gone.
      socket->set(zmq::sockopt::heartbeat_ivl, 1000);
      socket->set(zmq::sockopt::heartbeat_timeout, 3000);
    }
    if (options.bind) {
      // Without pings of its own, the ROUTER finds a peer gone without a FIN (power lost, network
      // cut) by TCP keepalive: probes after 10 s idle, every 5 s, 3 unanswered = gone (~25 s).
      socket->set(zmq::sockopt::tcp_keepalive, 1);
      socket->set(zmq::sockopt::tcp_keepalive_idle, 10);
      socket->set(zmq::sockopt::tcp_keepalive_intvl, 5);
      socket->set(zmq::sockopt::tcp_keepalive_cnt, 3);
      socket->set(zmq::sockopt::router_mandatory, 1);  // a gone peer is an error, not a silent drop
      socket->set(zmq::sockopt::router_handover, 1);   // a reconnecting worker takes its identity back
      // "tcp://host:0" is how users ask for any free port; ZeroMQ spells it "*".
      if (endpoint.rfind("tcp://", 0) == 0 && endpoint.size() > 2 && endpoint.substr(endpoint.size() - 2) == ":0")
        endpoint = endpoint.substr(0, endpoint.size() - 1) + "*";
      socket->bind(endpoint);
      endpoint = socket->get(zmq::sockopt::last_endpoint);
    } else {
      socket->set(zmq::sockopt::routing_id, options.identity);
      socket->set(zmq::sockopt::reconnect_ivl, 100);      // reconnect with backoff: 100 ms doubling
      socket->set(zmq::sockopt::reconnect_ivl_max, 5000);  // up to 5 s
      socket->connect(endpoint);
    }
  } catch (const zmq::error_t& e) {
    return make_error(std::string(options.bind ? "cannot bind " : "cannot connect to ") + options.endpoint + ": " + e.what());
  }
  static std::atomic<int> gateways{0};
  const std::string inner = "inproc://gantry-gateway-" + std::to_string(getpid()) + "-" + std::to_string(gateways++);
  auto pull = std::make_shared<zmq::socket_t>(context(), zmq::socket_type::pull);
  auto push = std::make_shared<zmq::socket_t>(context(), zmq::socket_type::push);
  pull->set(zmq::sockopt::linger, 0);
  push->set(zmq::sockopt::linger, 0);
  pull->bind(inner);
  push->connect(inner);
  auto shared = std::make_shared<Shared>();
  // The sockets move to their threads here; the spawns are the memory fence ZeroMQ asks for.
  caf::actor actor = system.spawn<caf::detached>(outbox_actor, push, shared);
  system.spawn<caf::detached>(socket_thread, options, socket, zap, pull, shared, actor);
  return Gateway{actor, endpoint};
}

}  // namespace gantry
