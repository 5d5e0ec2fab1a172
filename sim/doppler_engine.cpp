// The DOPPLER-compatible mode: an event-for-event emulation of the public DOPPLER simulator
// (SimPy; env/cost.py Simulator.get_cost). Each op is a process that waits for all its input
// edges (AllOf), requests its device (a capacity-1 FIFO resource), computes, releases the device and
// fires its finish event; each edge is a process that waits for its producer's finish event and
// then sleeps comm[src] (0 on the same device). Ties at equal times follow SimPy's event queue:
// (time, insertion order). Reproducing those hops, not just the timing rules, is what makes
// makespans match exactly when many ops become ready at once (integer costs tie often).
#include <algorithm>
#include <deque>
#include <limits>

#include "sim/doppler_edges.hpp"
#include "sim/event_queue.hpp"
#include "sim/simulator.hpp"

namespace gantry {

namespace {

enum Kind : std::int32_t { kComputeEnd, kRelease, kFinish, kCommTimeout, kCommEnd, kAllOf, kRequestOk, kKinds };

std::int32_t encode(Kind kind, std::int32_t id) { return id * kKinds + kind; }

}  // namespace

DopplerEdges::DopplerEdges(const Graph& g) : begin(g.size() + 1, 0), distinct_in(g.size(), 0) {
  for (OpId u = 0; u < g.size(); ++u) {
    begin[u] = static_cast<int>(src.size());
    const Span<OpId> succs = g.succs(u);
    const Span<EdgeId> out = g.out_edges(u);
    std::vector<OpId> order;  // destinations in order of first appearance
    for (OpId v : succs)
      if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
    for (OpId v : order) {
      int last = -1;
      for (std::size_t k = 0; k < succs.size(); ++k)
        if (succs[k] == v) {
          last = static_cast<int>(src.size());
          src.push_back(u);
          dst.push_back(v);
          edge.push_back(out[k]);
          awaited.push_back(0);
        }
      awaited[last] = 1;
      ++distinct_in[v];
    }
  }
  begin[g.size()] = static_cast<int>(src.size());
}

double Simulator::simulate_doppler(const std::int32_t* device, SimResult* out) {
  if (!doppler_edges_) doppler_edges_ = std::make_unique<DopplerEdges>(graph_);
  const DopplerEdges& edges = *doppler_edges_;
  const int n = graph_.size();
  int num_devices = 0;
  for (int i = 0; i < n; ++i) num_devices = std::max(num_devices, device[i] + 1);
  const bool record = out != nullptr && options_.record;

  EventQueue events;
  events.reserve(static_cast<std::size_t>(n) * 2);
  std::vector<int> arrived(n, 0);
  std::vector<OpId> user(num_devices, -1);
  std::vector<std::deque<OpId>> waiting(num_devices);
  std::vector<double> busy(num_devices, 0.0);
  if (out) out->start_run(n, record);
  std::uint32_t seq = 0;
  double now = 0, makespan = 0;
  int done = 0;

  auto grant_head = [&](int dev) {
    if (user[dev] >= 0 || waiting[dev].empty()) return;
    user[dev] = waiting[dev].front();
    waiting[dev].pop_front();
    events.push(now, seq++, encode(kRequestOk, user[dev]));
  };
  // Processes of source ops find their (empty) AllOf already triggered at t = 0, in op order.
  for (OpId op = 0; op < n; ++op)
    if (edges.distinct_in[op] == 0) events.push(0, seq++, encode(kAllOf, op));

  while (!events.empty()) {
    const Event event = events.top();
    events.pop();
    now = event.time;
    const std::int32_t id = event.what / kKinds;
    switch (static_cast<Kind>(event.what % kKinds)) {
      case kAllOf:  // the op's inputs are all there: it requests its device
        waiting[device[id]].push_back(id);
        grant_head(device[id]);
        break;
      case kRequestOk: {
        const double duration = costs_.op_time(id, device[id]);
        busy[device[id]] += duration;
        if (record) out->ops[id] = OpTiming{device[id], now, now + duration};
        events.push(now + duration, seq++, encode(kComputeEnd, id));
        break;
      }
      case kComputeEnd:  // leaving `with request()`: the slot frees now, the next waiter on Release
        user[device[id]] = -1;
        events.push(now, seq++, encode(kRelease, device[id]));
        events.push(now, seq++, encode(kFinish, id));
        makespan = now;
        ++done;
        break;
      case kRelease:
        grant_head(id);
        break;
      case kFinish:  // wakes every edge process of this producer, in registration order
        for (int k = edges.begin[id]; k < edges.begin[id + 1]; ++k) {
          const int from = device[id], to = device[edges.dst[k]];
          const double cost = costs_.transfer_time(edges.edge[k], from, to);
          if (out && from != to) {
            ++out->transfers;
            out->transfer_bytes += costs_.edge_bytes(edges.edge[k]);
            out->transfer_time += cost;
            if (record) out->transfer_log.push_back(TransferTiming{id, from, to, now, now + cost, costs_.edge_bytes(edges.edge[k])});
          }
          events.push(now + cost, seq++, encode(kCommTimeout, k));
        }
        break;
      case kCommTimeout:
        events.push(now, seq++, encode(kCommEnd, id));
        break;
      case kCommEnd: {
        if (!edges.awaited[id]) break;
        const OpId v = edges.dst[id];
        if (++arrived[v] == edges.distinct_in[v]) events.push(now, seq++, encode(kAllOf, v));
        break;
      }
      case kKinds:
        break;
    }
  }
  if (out) {
    out->makespan = makespan;
    out->busy = busy;
    out->busy.resize(std::max(busy.size(), device_streams_.size()), 0.0);
    out->completed = done == n;
  }
  return makespan;
}

}  // namespace gantry
