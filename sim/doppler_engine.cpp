// The DOPPLER-compatible mode: an event-for-event emulation of the public DOPPLER simulator
// (SimPy; env/cost.py Simulator.get_cost). Each op is a process that waits for all its input
// edges (AllOf), requests its device (a capacity-1 FIFO resource), computes, releases the device and
// fires its finish event; each edge is a process that waits for its producer's finish event and
// then sleeps comm[src] (0 on the same device). Ties at equal times follow SimPy's event queue:
// (time, insertion order). Reproducing those hops, not just the timing rules, is what makes
// makespans match exactly when many ops become ready at once (integer costs tie often).
//
// Most of those hops happen at the current time. Events scheduled for `now` always come after the
// queued events of the same time (those were scheduled earlier, with smaller sequence numbers), so
// they go to a plain FIFO instead of the heap: the same order, at a fraction of the cost.
#include <algorithm>
#include <limits>

#include "sim/doppler_state.hpp"
#include "sim/simulator.hpp"

namespace gantry {

namespace {

// Event = id << 3 | kind.
enum Kind : std::int32_t { kComputeEnd, kRelease, kFinish, kCommTimeout, kCommEnd, kAllOf, kRequestOk };
constexpr int kKindBits = 3;

std::int32_t encode(Kind kind, std::int32_t id) { return id << kKindBits | kind; }

}  // namespace

DopplerState::DopplerState(const Graph& g, int devices)
    : begin(g.size() + 1, 0), distinct_in(g.size(), 0) {
  std::vector<OpId> order;  // destinations in order of first appearance
  for (OpId u = 0; u < g.size(); ++u) {
    begin[u] = static_cast<int>(dst.size());
    const Span<OpId> succs = g.succs(u);
    const Span<EdgeId> out = g.out_edges(u);
    order.clear();
    for (OpId v : succs)
      if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
    for (OpId v : order) {
      int last = -1;
      for (std::size_t k = 0; k < succs.size(); ++k)
        if (succs[k] == v) {
          last = static_cast<int>(dst.size());
          dst.push_back(v);
          edge.push_back(out[k]);
          awaited.push_back(0);
        }
      awaited[last] = 1;
      ++distinct_in[v];
    }
  }
  begin[g.size()] = static_cast<int>(dst.size());
  future.reserve(dst.size() + static_cast<std::size_t>(g.size()) + 16);
  current.reserve(2 * dst.size() + 5 * static_cast<std::size_t>(g.size()) + 16);
  arrived.resize(g.size());
  user.resize(devices);
  waiting.resize(g.size());
  seg_begin.resize(devices + 1);
  head.resize(devices);
  tail.resize(devices);
  busy.resize(devices);
}

double Simulator::simulate_doppler(const std::int32_t* device, SimResult* out) {
  const int n = graph_.size();
  const int num_devices = static_cast<int>(device_streams_.size());
  if (!doppler_) doppler_ = std::make_unique<DopplerState>(graph_, num_devices);
  DopplerState& s = *doppler_;
  const bool record = out != nullptr && options_.record;

  s.future.clear();
  s.current.clear();
  std::fill(s.arrived.begin(), s.arrived.end(), 0);
  std::fill(s.user.begin(), s.user.end(), -1);
  std::fill(s.busy.begin(), s.busy.end(), 0.0);
  std::fill(s.seg_begin.begin(), s.seg_begin.end(), 0);
  for (int i = 0; i < n; ++i) ++s.seg_begin[device[i] + 1];
  for (int d = 0; d < num_devices; ++d) {
    s.seg_begin[d + 1] += s.seg_begin[d];
    s.head[d] = s.tail[d] = s.seg_begin[d];
  }
  if (out) out->start_run(n, record);
  std::uint32_t seq = 0;
  double now = 0, makespan = 0;
  int done = 0;
  std::size_t next_current = 0;

  auto schedule = [&](double time, std::int32_t what) {
    if (time == now)
      s.current.push_back(what);
    else
      s.future.push(time, seq++, what);
  };
  auto grant_head = [&](int dev) {
    if (s.user[dev] >= 0 || s.head[dev] == s.tail[dev]) return;
    s.user[dev] = s.waiting[s.head[dev]++];
    schedule(now, encode(kRequestOk, s.user[dev]));
  };
  // Processes of source ops find their (empty) AllOf already triggered at t = 0, in op order.
  for (OpId op = 0; op < n; ++op)
    if (s.distinct_in[op] == 0) s.current.push_back(encode(kAllOf, op));

  for (;;) {
    std::int32_t what;
    if (!s.future.empty() && s.future.top().time == now) {
      what = s.future.top().what;
      s.future.pop();
    } else if (next_current < s.current.size()) {
      what = s.current[next_current++];
    } else if (!s.future.empty()) {
      s.current.clear();
      next_current = 0;
      now = s.future.top().time;
      what = s.future.top().what;
      s.future.pop();
    } else {
      break;
    }
    const std::int32_t id = what >> kKindBits;
    switch (static_cast<Kind>(what & ((1 << kKindBits) - 1))) {
      case kAllOf:  // the op's inputs are all there: it requests its device
        s.waiting[s.tail[device[id]]++] = id;
        grant_head(device[id]);
        break;
      case kRequestOk: {
        const double duration = costs_.op_time(id, device[id]);
        s.busy[device[id]] += duration;
        if (record) out->ops[id] = OpTiming{device[id], now, now + duration};
        schedule(now + duration, encode(kComputeEnd, id));
        break;
      }
      case kComputeEnd:  // leaving `with request()`: the slot frees now, the next waiter on Release
        s.user[device[id]] = -1;
        schedule(now, encode(kRelease, device[id]));
        schedule(now, encode(kFinish, id));
        makespan = now;
        ++done;
        break;
      case kRelease:
        grant_head(id);
        break;
      case kFinish:  // wakes every edge process of this producer, in registration order
        for (int k = s.begin[id]; k < s.begin[id + 1]; ++k) {
          const int from = device[id], to = device[s.dst[k]];
          const double cost = costs_.transfer_time(s.edge[k], from, to);
          if (out && from != to) {
            ++out->transfers;
            out->transfer_bytes += costs_.edge_bytes(s.edge[k]);
            out->transfer_time += cost;
            if (record) out->transfer_log.push_back(TransferTiming{id, from, to, now, now + cost, costs_.edge_bytes(s.edge[k])});
          }
          schedule(now + cost, encode(kCommTimeout, k));
        }
        break;
      case kCommTimeout:
        schedule(now, encode(kCommEnd, id));
        break;
      case kCommEnd: {
        if (!s.awaited[id]) break;
        const OpId v = s.dst[id];
        if (++s.arrived[v] == s.distinct_in[v]) schedule(now, encode(kAllOf, v));
        break;
      }
    }
  }
  if (out) {
    out->makespan = makespan;
    out->busy = s.busy;
    out->completed = done == n;
  }
  return makespan;
}

}  // namespace gantry
