#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/cluster.hpp"
#include "sim/dary_heap.hpp"
#include "sim/doppler_state.hpp"
#include "sim/event_queue.hpp"
#include "sim/noise.hpp"
#include "sim/timeline_metrics.hpp"

namespace gantry {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

// What the event loop reads and writes per op, in one 32-byte record: visiting a successor touches
// one cache line instead of one per array, which is what keeps 100k-op graphs fast once their
// arrays no longer fit in the caches. Filled sequentially at the start of every run.
struct OpState {
  double ready_at;          // latest input arrival so far
  double duration;          // on its device, noise included
  std::int32_t pending;     // predecessors not yet delivered
  std::int32_t device;
  std::uint32_t ready_seq;  // order of readiness (priority ties)
  std::int32_t out_begin;   // first of its out edges in State::out (the next op's is the end)
};

// One out edge in successor order, everything its delivery reads in 16 bytes: the consumer and
// either the tensor's bytes (time from the link) or an explicit transfer time.
struct OutEdge {
  OpId dst;
  std::int32_t fixed;  // 1: `value` is the transfer time; 0: `value` is bytes
  double value;
};

// Every buffer one run needs, sized once per graph and cluster.
struct Simulator::State {
  int n = 0, d = 0;
  EventQueue events;
  std::vector<OpState> op;     // n + 1 records: the last one only closes out_begin
  std::vector<OutEdge> out;
  std::vector<double> out_bytes;    // per out edge, the tensor's bytes (statistics only)
  std::vector<std::int32_t> preds;  // per op, predecessor count
  std::vector<int> free_streams;
  std::vector<double> link_free;      // per directed link, when it is next free
  std::vector<double> port_free;      // per port (Cluster::num_ports), when it is next free
  // Per ordered device pair: the ports its transfers pass through, each with the share of the
  // port's bandwidth one transfer uses (path bandwidth / port bandwidth, <= 1).
  std::vector<int> path_begin, path_port;
  std::vector<double> path_share;
  std::vector<double> arrival_on;     // per device, arrival of the op being finished (dedup)
  std::vector<int> arrival_touched;
  // Ready queues: one segment of `queue` per device (FIFO ring or binary heap).
  std::vector<OpId> queue;
  std::vector<int> seg_begin, q_head, q_size;
  std::vector<int> touched;
  std::vector<char> is_touched;
  // Fixed order.
  std::vector<char> is_ready;
  std::vector<std::size_t> order_pos;
  // Memory.
  std::vector<double> memory_now;
  std::vector<int> consumers_left;
  int copy_words = 1;
  std::vector<std::uint64_t> copies_on;  // per op, a bit set of devices holding a received copy
  std::vector<double> busy;
  // Co-run slowdown (CostTable::co_run_slowdown): an op that starts while k other devices of its
  // host run, or start at the same instant, takes its duration times 1 + (factor - 1) x k (the
  // factor itself beside one: partitions of one GPU measured so, 1.77x beside one, 3.36x beside three).
  bool co_run = false;
  std::vector<double> co_run_factor;  // per device
  std::vector<int> host_of;           // per device
  std::vector<int> running;           // per device, ops running now
  std::vector<int> host_running;      // per host, devices running an op (or about to start one now)
  std::vector<char> counted;          // per device, counted in host_running
  // Devices without a copy engine (Device::copy_engine): after an op, its copies to other devices
  // run on its device, one after another, and its stream is free only when they are done.
  std::vector<char> copies_itself;  // per device
};

Simulator::Simulator(const Graph& graph, const CostTable& costs, const Cluster& cluster, SimOptions options)
    : graph_(graph), costs_(costs), options_(options), state_(std::make_unique<State>()) {
  for (const Device& dev : cluster.devices()) device_streams_.push_back(dev.streams);
  State& s = *state_;
  s.n = graph.size();
  s.d = cluster.size();
  s.op.assign(static_cast<std::size_t>(s.n) + 1, OpState{});
  s.preds.resize(s.n);
  for (OpId u = 0; u < s.n; ++u) {
    s.preds[u] = static_cast<std::int32_t>(graph.preds(u).size());
    s.op[u].out_begin = static_cast<std::int32_t>(s.out.size());
    const Span<OpId> succs = graph.succs(u);
    const Span<EdgeId> edges = graph.out_edges(u);
    for (std::size_t k = 0; k < succs.size(); ++k) {
      const double fixed = costs.edge_fixed(edges[k]);
      s.out.push_back(fixed >= 0 ? OutEdge{succs[k], 1, fixed} : OutEdge{succs[k], 0, costs.edge_bytes(edges[k])});
      s.out_bytes.push_back(costs.edge_bytes(edges[k]));
    }
  }
  s.op[s.n].out_begin = static_cast<std::int32_t>(s.out.size());
  s.free_streams.resize(s.d);
  s.link_free.resize(static_cast<std::size_t>(s.d) * s.d);
  s.port_free.resize(cluster.num_ports());
  s.path_begin.assign(static_cast<std::size_t>(s.d) * s.d + 1, 0);
  for (int a = 0; a < s.d; ++a)
    for (int b = 0; b < s.d; ++b) {
      const double path = cluster.path_bandwidth(a, b);
      for (const PortUse& port : cluster.ports_on_path(a, b)) {
        s.path_port.push_back(port.port);
        s.path_share.push_back(path / port.bandwidth);
      }
      s.path_begin[static_cast<std::size_t>(a) * s.d + b + 1] = static_cast<int>(s.path_port.size());
    }
  s.arrival_on.assign(s.d, -1);
  s.queue.resize(s.n);
  s.seg_begin.resize(s.d + 1);
  s.q_head.resize(s.d);
  s.q_size.resize(s.d);
  s.is_touched.assign(s.d, 0);
  s.is_ready.resize(s.n);
  s.order_pos.resize(s.d);
  s.memory_now.resize(s.d);
  s.consumers_left.resize(s.n);
  s.copy_words = (s.d + 63) / 64;
  s.busy.resize(s.d);
  for (const Device& dev : cluster.devices()) s.copies_itself.push_back(!dev.copy_engine);
  s.co_run = costs.has_co_run_slowdown();
  if (s.co_run) {
    int hosts = 0;
    for (int k = 0; k < s.d; ++k) {
      s.co_run_factor.push_back(costs.co_run_slowdown(k));
      s.host_of.push_back(cluster.device(k).host);
      hosts = std::max(hosts, cluster.device(k).host + 1);
    }
    s.running.resize(s.d);
    s.counted.resize(s.d);
    s.host_running.resize(hosts);
  }
  s.events.reserve(static_cast<std::size_t>(s.n) + 16);
}

Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;

Status Simulator::check(const Placement& placement) const {
  return placement.check(graph_, static_cast<int>(device_streams_.size()), "placement");
}

double Simulator::makespan(const std::int32_t* device, const double* priority) {
  if (options_.doppler) return simulate_doppler(device, nullptr);
  if (options_.noise_sigma <= 0 || options_.noise_samples <= 1) return simulate(device, priority, nullptr, options_.seed, nullptr);
  double sum = 0;
  for (int k = 0; k < options_.noise_samples; ++k)
    sum += simulate(device, priority, nullptr, noise_draw_seed(options_.seed, k), nullptr);
  return sum / options_.noise_samples;
}

double Simulator::makespan(const Placement& placement) {
  Status valid = check(placement);
  if (!valid) throw std::invalid_argument(valid.error().message);
  return makespan(placement.device.data(), placement.has_priority() ? placement.priority.data() : nullptr);
}

SimResult Simulator::run(const Placement& placement, const std::vector<std::vector<OpId>>* order) {
  SimResult result;
  Status valid = check(placement);
  if (!valid) {
    result.completed = false;
    result.makespan = kInf;
    result.error = valid.error().message;
    return result;
  }
  const double* prio = placement.has_priority() ? placement.priority.data() : nullptr;
  if (options_.doppler)
    simulate_doppler(placement.device.data(), &result);
  else
    simulate(placement.device.data(), prio, order, options_.seed, &result);
  if (options_.record) add_timeline_metrics(result);
  return result;
}

double Simulator::simulate(const std::int32_t* device, const double* priority,
                           const std::vector<std::vector<OpId>>* order, std::uint64_t noise_seed, SimResult* out) {
  State& s = *state_;
  const Graph& g = graph_;
  const int n = s.n, D = s.d;
  const bool by_priority = options_.dispatch == Dispatch::priority && priority != nullptr;
  const bool fixed = options_.dispatch == Dispatch::fixed_order && order != nullptr;
  const bool contention = options_.links == LinkModel::contention;
  const bool dedup = options_.dedup_transfers;
  const bool memory = options_.track_memory && out != nullptr;
  const bool record = options_.record && out != nullptr;
  const double sigma = options_.noise_sigma;
  const bool ports = contention && !s.path_port.empty();
  const int words = s.copy_words;

  // ---- reset ----------------------------------------------------------------------------------
  s.events.clear();
  std::fill(s.link_free.begin(), s.link_free.end(), 0.0);
  if (ports) std::fill(s.port_free.begin(), s.port_free.end(), 0.0);
  std::fill(s.busy.begin(), s.busy.end(), 0.0);
  std::fill(s.q_size.begin(), s.q_size.end(), 0);
  std::fill(s.q_head.begin(), s.q_head.end(), 0);
  std::fill(s.seg_begin.begin(), s.seg_begin.end(), 0);
  for (int i = 0; i < n; ++i) ++s.seg_begin[device[i] + 1];
  for (int k = 0; k < D; ++k) {
    s.seg_begin[k + 1] += s.seg_begin[k];
    s.free_streams[k] = options_.streams > 0 ? options_.streams : device_streams_[k];
  }
  if (fixed) {
    std::fill(s.is_ready.begin(), s.is_ready.end(), 0);
    std::fill(s.order_pos.begin(), s.order_pos.end(), 0);
  }
  const bool co_run = s.co_run;
  if (co_run) {
    std::fill(s.running.begin(), s.running.end(), 0);
    std::fill(s.counted.begin(), s.counted.end(), 0);
    std::fill(s.host_running.begin(), s.host_running.end(), 0);
  }
  if (memory) {
    std::fill(s.memory_now.begin(), s.memory_now.end(), 0.0);
    out->peak_memory.assign(D, 0.0);
    s.copies_on.assign(static_cast<std::size_t>(n) * words, 0);  // sized on the first tracked run only
  }
  if (out) out->start_run(n, record);
  std::uint32_t seq = 0;
  double now = 0;
  int done = 0;
  s.touched.clear();

  auto touch = [&](int dev) {
    if (!s.is_touched[dev]) {
      s.is_touched[dev] = 1;
      s.touched.push_back(dev);
    }
  };
  // Ready-queue ops, FIFO ring or heap on (-priority, ready_seq), inside the device segment.
  auto ready_key = [&](OpId op) { return std::pair<double, std::uint32_t>{-priority[op], s.op[op].ready_seq}; };
  auto enqueue = [&](OpId op) {
    const int dev = s.op[op].device;
    s.op[op].ready_seq = seq++;
    touch(dev);
    if (fixed) {
      s.is_ready[op] = 1;
      return;
    }
    OpId* q = s.queue.data() + s.seg_begin[dev];
    const int cap = s.seg_begin[dev + 1] - s.seg_begin[dev];
    if (!by_priority) {
      int tail = s.q_head[dev] + s.q_size[dev];
      if (tail >= cap) tail -= cap;
      q[tail] = op;
      ++s.q_size[dev];
      return;
    }
    heap_push<2>(q, static_cast<std::size_t>(s.q_size[dev]++), op, ready_key);
  };
  auto dequeue = [&](int dev) -> OpId {
    OpId* q = s.queue.data() + s.seg_begin[dev];
    if (!by_priority) {
      OpId op = q[s.q_head[dev]];
      const int cap = s.seg_begin[dev + 1] - s.seg_begin[dev];
      if (++s.q_head[dev] == cap) s.q_head[dev] = 0;
      --s.q_size[dev];
      return op;
    }
    return heap_pop<2>(q, static_cast<std::size_t>(s.q_size[dev]--), ready_key);
  };
  // A device joins its host's count when it runs an op, or is about to start one at this instant
  // (so devices starting together slow each other whichever is dispatched first).
  auto count_running = [&](int dev) {
    if (!s.counted[dev]) {
      s.counted[dev] = 1;
      ++s.host_running[s.host_of[dev]];
    }
  };
  auto start = [&](OpId op, int dev) {
    double duration = s.op[op].duration;
    if (co_run && duration > 0) {
      count_running(dev);
      ++s.running[dev];
      duration *= 1 + (s.co_run_factor[dev] - 1) * (s.host_running[s.host_of[dev]] - 1);  // per busy neighbour
    }
    --s.free_streams[dev];
    s.busy[dev] += duration;
    s.events.push(now + duration, seq++, op);
    if (record) out->ops[op] = OpTiming{dev, now, now + duration};
    if (memory) {
      s.memory_now[dev] += g.output_bytes(op) + g.memory(op) + g.mem_alloc(op);
      out->peak_memory[dev] = std::max(out->peak_memory[dev], s.memory_now[dev]);
    }
  };
  auto deliver = [&](OpId v, double arrival) {
    OpState& o = s.op[v];
    if (arrival > o.ready_at) o.ready_at = arrival;
    if (--o.pending == 0) {
      if (o.ready_at <= now)
        enqueue(v);
      else
        s.events.push(o.ready_at, seq++, ~v);  // a READY event
    }
  };
  // A transfer of u's output to `to`, started no earlier than `earliest`; returns its arrival.
  // `copier_free`, for a device that copies itself: set to when its copy of the data ends (the
  // latency, a wake-up on the receiving side, occupies no sender, as it occupies no port).
  auto ship = [&](OpId u, const OutEdge& edge, int from, int to, double earliest, double* copier_free) -> double {
    if (dedup && s.arrival_on[to] >= 0) return s.arrival_on[to];
    const double data_time = edge.fixed ? edge.value : edge.value * costs_.inv_bandwidth(from, to);
    const double cost = edge.fixed ? edge.value : costs_.latency(from, to) + data_time;
    double begin = earliest;
    const std::size_t pair = static_cast<std::size_t>(from) * D + to;
    double* link = &s.link_free[pair];
    if (contention) {
      if (*link > begin) begin = *link;
      if (ports) {  // a transfer waits for every port on its path, then holds each for its share
        // of the data's time (latency overlaps: it does not occupy a port)
        for (int k = s.path_begin[pair]; k < s.path_begin[pair + 1]; ++k) begin = std::max(begin, s.port_free[s.path_port[k]]);
        for (int k = s.path_begin[pair]; k < s.path_begin[pair + 1]; ++k)
          s.port_free[s.path_port[k]] = begin + data_time * s.path_share[k];
      }
      // A sender that copies itself holds the link as it holds itself: for the data's time.
      *link = begin + (copier_free ? data_time : cost);
    }
    const double arrival = begin + cost;
    if (copier_free) *copier_free = begin + data_time;
    if (dedup) {
      s.arrival_on[to] = arrival;
      s.arrival_touched.push_back(to);
    }
    if (out) {
      ++out->transfers;
      const double bytes = s.out_bytes[&edge - s.out.data()];
      out->transfer_bytes += bytes;
      out->transfer_time += cost;
      if (record) out->transfer_log.push_back(TransferTiming{u, from, to, begin, arrival, bytes});
      if (memory) {
        std::uint64_t& word = s.copies_on[static_cast<std::size_t>(u) * words + (to >> 6)];
        if (!(word >> (to & 63) & 1)) {
          word |= std::uint64_t{1} << (to & 63);
          s.memory_now[to] += g.output_bytes(u);
          out->peak_memory[to] = std::max(out->peak_memory[to], s.memory_now[to]);
        }
      }
    }
    return arrival;
  };
  auto release_inputs = [&](OpId v) {  // memory: free a tensor once all its consumers are done
    for (OpId u : g.preds(v)) {
      if (--s.consumers_left[u] != 0) continue;
      s.memory_now[s.op[u].device] -= g.output_bytes(u);
      const std::uint64_t* copies = &s.copies_on[static_cast<std::size_t>(u) * words];
      for (int w = 0; w < words; ++w)
        for (std::uint64_t bits = copies[w]; bits; bits &= bits - 1)
          s.memory_now[w * 64 + __builtin_ctzll(bits)] -= g.output_bytes(u);
    }
  };
  auto finish = [&](OpId u) {
    const int dev = s.op[u].device;
    if (co_run && s.op[u].duration > 0 && --s.running[dev] == 0) {
      s.counted[dev] = 0;
      --s.host_running[s.host_of[dev]];
    }
    touch(dev);
    ++done;
    if (memory) {
      s.memory_now[dev] -= g.memory(u) + g.mem_free(u);
      release_inputs(u);
    }
    const bool copies_itself = s.copies_itself[dev];
    double copies_end = now;  // without a copy engine: when the device's last copy of u ends
    for (std::int32_t k = s.op[u].out_begin, end = s.op[u + 1].out_begin; k < end; ++k) {
      const OutEdge& edge = s.out[k];
      const int to = s.op[edge.dst].device;
      // copies_end stays `now` on a device with a copy engine: its copies all start at the op's end
      deliver(edge.dst, to == dev ? now : ship(u, edge, dev, to, copies_end, copies_itself ? &copies_end : nullptr));
    }
    for (int to : s.arrival_touched) s.arrival_on[to] = -1;
    s.arrival_touched.clear();
    if (copies_end > now)
      s.events.push(copies_end, seq++, n + dev);  // a STREAM FREE event
    else
      ++s.free_streams[dev];
  };
  auto dispatch = [&](int dev) {
    if (fixed) {
      const std::vector<OpId>& list = (*order)[dev];
      std::size_t& pos = s.order_pos[dev];
      while (s.free_streams[dev] > 0 && pos < list.size() && s.is_ready[list[pos]]) start(list[pos++], dev);
      return;
    }
    while (s.free_streams[dev] > 0 && s.q_size[dev] > 0) start(dequeue(dev), dev);
  };
  // Whether `dev` starts an op that takes time at this instant (ops of no time are no neighbours).
  auto will_start = [&](int dev) {
    if (s.free_streams[dev] <= 0) return false;
    if (!fixed) return s.q_size[dev] > 0 && s.op[s.queue[s.seg_begin[dev] + (by_priority ? 0 : s.q_head[dev])]].duration > 0;
    const std::vector<OpId>& list = (*order)[dev];
    return s.order_pos[dev] < list.size() && s.is_ready[list[s.order_pos[dev]]] && s.op[list[s.order_pos[dev]]].duration > 0;
  };
  auto dispatch_touched = [&] {
    if (co_run)
      for (int dev : s.touched)
        if (will_start(dev)) count_running(dev);
    for (int dev : s.touched) {
      s.is_touched[dev] = 0;
      dispatch(dev);
    }
    s.touched.clear();
  };

  // ---- run ------------------------------------------------------------------------------------
  for (OpId op = 0; op < n; ++op) {
    OpState& o = s.op[op];
    o.pending = s.preds[op];
    o.ready_at = 0;
    o.device = device[op];
    o.duration = costs_.op_time(op, o.device);
    if (sigma > 0) o.duration *= noise_factor(noise_seed, op, sigma);
    if (memory) s.consumers_left[op] = static_cast<int>(g.succs(op).size());
  }
  for (OpId op = 0; op < n; ++op)
    if (s.op[op].pending == 0) enqueue(op);
  dispatch_touched();
  double makespan = 0;
  while (!s.events.empty()) {
    now = s.events.top().time;
    do {
      const std::int32_t what = s.events.top().what;
      s.events.pop();
      if (what >= n) {
        ++s.free_streams[what - n];
        touch(what - n);
      } else if (what >= 0) {
        finish(what);
        makespan = now;
      } else {
        enqueue(~what);
      }
    } while (!s.events.empty() && s.events.top().time == now);
    dispatch_touched();
  }

  if (out) {
    out->makespan = makespan;
    out->busy.assign(s.busy.begin(), s.busy.end());
    out->completed = done == n;
    if (!out->completed) out->error = describe_deadlock(*order, device, done);
  }
  return done == n ? makespan : kInf;
}

// Names every blocked device and the op it waits on, then the cycle of waiting devices: device d
// waits for its next op, whose unfinished input comes from device d', which waits in turn...
std::string Simulator::describe_deadlock(const std::vector<std::vector<OpId>>& order, const std::int32_t* device,
                                         int done) const {
  const State& s = *state_;
  std::vector<long> position(graph_.size(), -1);
  for (std::size_t dev = 0; dev < order.size(); ++dev)
    for (std::size_t k = 0; k < order[dev].size(); ++k) position[order[dev][k]] = static_cast<long>(k);
  auto started = [&](OpId op) {
    return position[op] >= 0 && static_cast<std::size_t>(position[op]) < s.order_pos[device[op]];
  };
  std::string text = "deadlock: " + std::to_string(graph_.size() - done) + " ops never ran; blocked devices:";
  std::vector<int> waits_for(order.size(), -1);
  std::vector<OpId> head(order.size(), -1), blocker(order.size(), -1);
  for (std::size_t dev = 0; dev < order.size(); ++dev) {
    if (s.order_pos[dev] >= order[dev].size()) continue;
    head[dev] = order[dev][s.order_pos[dev]];
    text += " device " + std::to_string(dev) + " waits on " + graph_.name(head[dev]) + ";";
    for (OpId p : graph_.preds(head[dev]))
      if (!started(p)) {
        blocker[dev] = p;
        waits_for[dev] = device[p];
        break;
      }
  }
  for (std::size_t first = 0; first < order.size(); ++first) {
    if (waits_for[first] < 0) continue;
    std::vector<int> seen(order.size(), -1);
    int d = static_cast<int>(first);
    for (int step = 0; d >= 0 && seen[d] < 0; ++step) {
      seen[d] = step;
      d = waits_for[d];
    }
    if (d < 0) continue;
    std::string cycle = " cycle:";
    const int start = d;
    do {
      cycle += " device " + std::to_string(d) + " (" + graph_.name(head[d]) + " needs " + graph_.name(blocker[d]) + ") ->";
      d = waits_for[d];
    } while (d != start);
    return text + cycle + " device " + std::to_string(start);
  }
  return text;
}

double makespan_lower_bound(const Graph& graph, const CostTable& costs, const Cluster& cluster,
                            const SimOptions& options) {
  std::vector<double> finish(graph.size(), 0.0);
  double critical = 0, work = 0;
  for (OpId op : graph.topo_order()) {
    double begin = 0;
    for (OpId p : graph.preds(op)) begin = std::max(begin, finish[p]);
    finish[op] = begin + costs.min_op_time(op);
    critical = std::max(critical, finish[op]);
    work += costs.min_op_time(op);
  }
  long streams = 0;
  for (const Device& d : cluster.devices())
    streams += options.doppler ? 1 : options.streams > 0 ? options.streams : d.streams;
  return std::max(critical, work / static_cast<double>(std::max(1L, streams)));
}

}  // namespace gantry
