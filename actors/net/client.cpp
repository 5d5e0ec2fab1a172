#include "actors/net/client.hpp"

#include "core/deadline.hpp"
#include "core/text.hpp"

#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace gantry {

namespace {

// One request and its reply; `answered`: whether the coordinator replied (or the request could not
// be sent at all): false only when nothing came back in time.
Result<wire::Reply> exchange(const ClientOptions& options, wire::Type type, wire::Request request, bool* answered) {
  *answered = true;
  const std::string& endpoint = options.endpoint;
  const double timeout_seconds = options.timeout_seconds;
  static zmq::context_t context{1};
  std::random_device random;
  request.id = (static_cast<std::uint64_t>(random()) << 32) | random();
  const std::string who = "no answer from the coordinator at " + endpoint;
  try {
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::routing_id, "client/" + std::to_string(getpid()) + "/" + std::to_string(request.id));
    if (options.curve.enabled) {
      socket.set(zmq::sockopt::curve_serverkey, options.curve.server_public_key);
      socket.set(zmq::sockopt::curve_publickey, options.curve.own.public_key);
      socket.set(zmq::sockopt::curve_secretkey, options.curve.own.secret_key);
    }
    const std::string payload = wire::encode(request);
    // Over the limit, the coordinator's socket drops the connection unread and the client would
    // wait out its whole timeout for nothing: refused here, saying why.
    if (payload.size() > wire::kMaxPayloadBytes)
      return make_error("the " + std::string(wire::to_string(type)) + " request is " + format_bytes(static_cast<double>(payload.size())) +
                        ", over the " + format_bytes(static_cast<double>(wire::kMaxPayloadBytes)) +
                        " a coordinator accepts in one message (a job carries its graph: this graph is too large to send)");
    socket.connect(endpoint);
    const std::uint8_t header[2] = {wire::kProtocolVersion, static_cast<std::uint8_t>(type)};
    std::array<zmq::const_buffer, 3> frames{zmq::buffer(header, 1), zmq::buffer(header + 1, 1), zmq::buffer(payload)};
    zmq::send_multipart(socket, frames);
    const auto deadline = deadline_after(timeout_seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(50));
      if (!(items[0].revents & ZMQ_POLLIN)) continue;
      std::vector<zmq::message_t> in;
      if (!zmq::recv_multipart(socket, std::back_inserter(in), zmq::recv_flags::dontwait)) continue;
      if (in.size() != 3) continue;
      auto t = wire::parse_header(in[0].to_string_view(), in[1].to_string_view());
      if (!t || t.value() != wire::Type::reply) continue;  // heartbeats and strays
      auto reply = wire::decode<wire::Reply>(in[2].to_string_view());
      if (!reply) return make_error("the coordinator at " + endpoint + " sent an unreadable reply: " + reply.error().message);
      if (reply.value().id != request.id && !(reply.value().id == 0 && !reply.value().ok)) continue;
      if (!reply.value().ok) return make_error(reply.value().error);
      return reply;
    }
  } catch (const zmq::error_t& e) {
    return make_error("cannot reach the coordinator at " + endpoint + ": " + e.what());
  }
  *answered = false;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", timeout_seconds);
  return make_error(who + " within " + seconds + " s (is `gantry coordinator` running there" +
                    (options.curve.enabled ? ", and is this key in its authorized keys?)" : "? does it require CURVE keys?)"));
}

}  // namespace

Result<wire::Reply> call_coordinator(const ClientOptions& options, wire::Type type, wire::Request request) {
  bool answered = false;
  return exchange(options, type, std::move(request), &answered);
}

Result<wire::Reply> submit_to_coordinator(const ClientOptions& options, wire::Request request, int attempts,
                                          const std::function<void(const std::string&)>& on_retry) {
  if (request.key.empty()) {
    std::random_device random;
    char key[33];
    std::snprintf(key, sizeof key, "%08x%08x%08x%08x", random(), random(), random(), random());
    request.key = key;
  }
  for (int attempt = 1;; ++attempt) {
    bool answered = false;
    auto reply = exchange(options, wire::Type::submit, request, &answered);
    if (reply || answered) return reply;
    // No reply: sent again only to a coordinator that answers now and knows submit keys (an older
    // one would make the job again; one that does not answer is down or unreachable).
    const std::string maybe = " (the job may have been accepted: see `gantry jobs --coordinator " + options.endpoint + "`)";
    if (attempt >= attempts) return make_error(reply.error().message + maybe);
    auto status = exchange(options, wire::Type::status, wire::Request{}, &answered);
    if (!status) return make_error(reply.error().message + maybe);
    const auto said = nlohmann::json::parse(status.value().data, nullptr, false);
    if (!said.is_object() || !said.value("submit_keys", false))
      return make_error(reply.error().message + "; not sent again: this coordinator does not know submit keys" + maybe);
    if (on_retry)
      on_retry(reply.error().message + "; submitting again with the same key (attempt " + std::to_string(attempt + 1) +
               " of " + std::to_string(attempts) + ")");
  }
}

}  // namespace gantry
