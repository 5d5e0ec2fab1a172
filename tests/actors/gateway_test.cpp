// The coordinator's socket against peers that reuse a routing id: a worker's name taken by another
// connection (an impostor, or the same worker reconnecting over a half-open one) is handed over,
// and must not bring the coordinator down.
#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <thread>
#include <zmq.hpp>

#include "actors/messages.hpp"
#include "actors/net/gateway.hpp"
#include "actors/net/wire.hpp"

using namespace gantry;

namespace {

// Sends three frames (version, type, payload: a message the gateway drops as unreadable; what the
// socket does with connections is the point) every 20 ms for `seconds`, then closes.
void talk_as(zmq::context_t& context, const std::string& endpoint, const std::string& identity, double seconds) {
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::routing_id, identity);
  dealer.connect(endpoint);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    dealer.send(zmq::buffer("\x02", 1), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    dealer.send(zmq::buffer("\x02", 1), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    dealer.send(zmq::buffer("\x80", 1), zmq::send_flags::dontwait);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

TEST_CASE("a routing id taken over again and again by other connections leaves the coordinator's socket up", "[actors][slow]") {
  // libzmq 4.3.4 aborted the process (stream_engine_base.cpp:331, "!_io_error") within 5-15 such
  // rounds when the bound socket also sent ZMTP heartbeats; this test then dies with SIGABRT.
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  std::atomic<int> from_after{0};  // readable messages the gateway delivered from peer "after"
  auto sink = system.spawn([&from_after](caf::event_based_actor* self) {
    self->set_default_handler(caf::drop);
    return caf::behavior{[&from_after](net_in_atom, const wire::Envelope& e) {
      if (e.peer == "after") ++from_after;
    }};
  });
  GatewayOptions options;
  options.endpoint = "tcp://127.0.0.1:0";
  options.workers = sink;
  options.clients = sink;
  auto gateway = spawn_gateway(system, options);
  REQUIRE(gateway.ok());
  zmq::context_t context;
  std::atomic<bool> holding{true};
  std::thread holder([&] {
    while (holding) talk_as(context, gateway.value().endpoint, "victim", 0.5);
  });
  const double holds[] = {0.05, 0.3, 1.0, 2.0, 3.5};
  for (int round = 0; round < 20; ++round) talk_as(context, gateway.value().endpoint, "victim", holds[(round * 3) % 5]);
  holding = false;
  holder.join();
  // Still serving: a heartbeat from a fresh connection reaches the workers' actor.
  {
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.set(zmq::sockopt::routing_id, std::string("after"));
    dealer.connect(gateway.value().endpoint);
    const char version = static_cast<char>(wire::kProtocolVersion), type = static_cast<char>(wire::Type::heartbeat);
    const std::string payload = wire::encode_empty();
    dealer.send(zmq::buffer(&version, 1), zmq::send_flags::sndmore);
    dealer.send(zmq::buffer(&type, 1), zmq::send_flags::sndmore);
    dealer.send(zmq::buffer(payload), zmq::send_flags::none);
    for (int i = 0; i < 500 && from_after == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(from_after == 1);
  anon_send_exit(gateway.value().actor, caf::exit_reason::user_shutdown);
  anon_send_exit(sink, caf::exit_reason::user_shutdown);
  SUCCEED("the gateway survived 20 rounds of a taken-over routing id");
}
