#include "executor/placed_run.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>

#include "core/text.hpp"
#include "executor/program.hpp"
#include "executor/run_statistics.hpp"

namespace gantry {

namespace {

struct ReadyItem {
  double priority;
  std::uint64_t seq;
  OpId op;
};
struct LaterFirst {  // heap order: highest priority, then the earliest to become ready
  bool operator()(const ReadyItem& a, const ReadyItem& b) const {
    return a.priority != b.priority ? a.priority < b.priority : a.seq > b.seq;
  }
};

struct Transfer {
  OpId op;
  at::Tensor value;
};

// One run of a placed graph. Every shared field is guarded by mu_; kernels and copies run outside.
class PlacedRun {
 public:
  PlacedRun(const Graph& graph, const Placement& placement, const Cluster& cluster, const ExecOptions& options,
            DeviceBackend& backend)
      : g_(graph), backend_(backend), placement_(placement), cluster_(cluster), options_(options),
        n_(g_.size()), d_(cluster.size()) {
    consumers_on_.assign(static_cast<std::size_t>(d_), std::vector<int>(static_cast<std::size_t>(n_), 0));
    for (EdgeId e = 0; e < g_.num_edges(); ++e) {
      const OpId src = g_.edge_src(e), dst = g_.edge_dst(e);
      ++consumers_on_[static_cast<std::size_t>(device(dst))][static_cast<std::size_t>(src)];
      if (device(src) != device(dst) && !copies_itself(device(src))) links_used_.push_back(device(src) * d_ + device(dst));
    }
    std::sort(links_used_.begin(), links_used_.end());
    links_used_.erase(std::unique(links_used_.begin(), links_used_.end()), links_used_.end());
  }

  Result<RunRecord> run(std::vector<OutputTensor>* outputs) {
    reset();
    std::vector<std::thread> threads;
    try {
      for (int dev = 0; dev < d_; ++dev)
        for (int s = 0; s < streams(dev); ++s) threads.emplace_back([this, dev, s] { device_loop(dev, s); });
      for (int link : links_used_) threads.emplace_back([this, link] { link_loop(link); });
    } catch (const std::exception& e) {  // out of threads: end the run, let the started ones leave
      std::lock_guard<std::mutex> lock(mu_);
      go_ = true;
      fail(std::string("starting the executor's threads: ") + e.what());
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (auto failure = attempt([this] { backend_.begin_run(); })) fail("starting the run on the devices: " + *failure);
      go_ = true;
      wake_all();
      done_cv_.wait(lock, [this] { return stop_; });
      record_.makespan = last_end_;
    }
    for (std::thread& t : threads) t.join();
    if (!error_.empty()) return make_error(error_);
    if (outputs)
      if (auto failure = attempt([&] { collect_outputs(*outputs); })) return make_error("reading the outputs: " + *failure);
    return std::move(record_);
  }

 private:
  int device(OpId op) const { return placement_.device[static_cast<std::size_t>(op)]; }
  int streams(int dev) const { return options_.fixed_order ? 1 : std::max(1, cluster_.device(dev).streams); }
  // A device without a copy engine copies its outputs itself (Device::copy_engine); link threads
  // make the others' copies.
  bool copies_itself(int dev) const { return !cluster_.device(dev).copy_engine; }
  bool keeps(OpId op) const { return options_.keep_outputs && g_.succs(op).size() == 0; }

  void reset() {
    go_ = stop_ = false;
    error_.clear();
    done_ = 0;
    seq_ = 0;
    last_end_ = 0;
    waiting_ = 0;
    active_ = 0;
    record_ = RunRecord{};
    record_.ops.assign(static_cast<std::size_t>(n_), OpRecord{});
    values_.assign(static_cast<std::size_t>(d_), std::vector<at::Tensor>(static_cast<std::size_t>(n_)));
    uses_ = consumers_on_;
    sent_.assign(static_cast<std::size_t>(n_) * static_cast<std::size_t>(d_), 0);
    remaining_.assign(static_cast<std::size_t>(n_), 0);
    ready_.assign(static_cast<std::size_t>(d_), {});
    device_cv_ = std::vector<std::condition_variable>(static_cast<std::size_t>(d_));
    link_queue_.assign(static_cast<std::size_t>(d_) * static_cast<std::size_t>(d_), {});
    link_cv_ = std::vector<std::condition_variable>(static_cast<std::size_t>(d_) * static_cast<std::size_t>(d_));
    is_ready_.assign(static_cast<std::size_t>(n_), 0);
    next_.assign(static_cast<std::size_t>(d_), 0);
    device_threads_ = 0;
    for (int dev = 0; dev < d_; ++dev) device_threads_ += streams(dev);
    for (OpId op = 0; op < n_; ++op) {
      remaining_[static_cast<std::size_t>(op)] = static_cast<int>(g_.preds(op).size());
      // The producer's own copy is read by its local consumers and by each outgoing transfer.
      int remote = 0;
      for (int dev = 0; dev < d_; ++dev)
        remote += dev != device(op) && consumers_on_[static_cast<std::size_t>(dev)][static_cast<std::size_t>(op)] > 0;
      uses_[static_cast<std::size_t>(device(op))][static_cast<std::size_t>(op)] += remote + (keeps(op) ? 1 : 0);
    }
    for (OpId op = 0; op < n_; ++op)
      if (remaining_[static_cast<std::size_t>(op)] == 0) make_ready(op);
  }

  void wake_all() {
    for (auto& cv : device_cv_) cv.notify_all();
    for (auto& cv : link_cv_) cv.notify_all();
    done_cv_.notify_all();
  }

  void fail(std::string message) {  // mu_ held
    if (error_.empty()) error_ = std::move(message);
    stop_ = true;
    wake_all();
  }

  void make_ready(OpId op) {  // mu_ held
    const int dev = device(op);
    if (options_.fixed_order) {
      is_ready_[static_cast<std::size_t>(op)] = 1;
    } else {
      const double priority = placement_.has_priority() ? placement_.priority[static_cast<std::size_t>(op)] : 0;
      ready_[static_cast<std::size_t>(dev)].push({priority, seq_++, op});
    }
    device_cv_[static_cast<std::size_t>(dev)].notify_one();
  }

  // The next op for one of `dev`'s streams, or false when the run is over (or failed).
  bool next_op(int dev, OpId* op, std::unique_lock<std::mutex>& lock) {
    auto& cv = device_cv_[static_cast<std::size_t>(dev)];
    while (true) {
      if (stop_) return false;
      if (options_.fixed_order) {
        const auto& order = options_.order[static_cast<std::size_t>(dev)];
        auto& next = next_[static_cast<std::size_t>(dev)];
        if (next == order.size()) {
          --device_threads_;  // this device is done: it no longer counts as a waiting thread
          check_stalled();
          return false;
        }
        if (is_ready_[static_cast<std::size_t>(order[next])]) {
          *op = order[next++];
          return true;
        }
      } else if (!ready_[static_cast<std::size_t>(dev)].empty()) {
        *op = ready_[static_cast<std::size_t>(dev)].top().op;
        ready_[static_cast<std::size_t>(dev)].pop();
        return true;
      }
      ++waiting_;
      check_stalled();
      if (!stop_) cv.wait(lock);  // check_stalled may have ended the run: its notifications are past
      --waiting_;
    }
  }

  // With fixed orders, every live device thread waiting while no op runs and no transfer moves
  // means no event can ever wake them: the order deadlocks.
  void check_stalled() {  // mu_ held
    if (stop_ || !options_.fixed_order || active_ > 0 || waiting_ < device_threads_ || done_ == n_) return;
    std::string waits;
    for (int dev = 0; dev < d_; ++dev) {
      const auto& order = options_.order[static_cast<std::size_t>(dev)];
      const std::size_t next = next_[static_cast<std::size_t>(dev)];
      if (next < order.size() && is_ready_[static_cast<std::size_t>(order[next])]) return;  // about to wake
      if (next < order.size()) waits += (waits.empty() ? "" : ", ") + std::string("device ") + std::to_string(dev) +
                                        " waits for " + g_.name(order[next]);
    }
    fail("the fixed order deadlocks: " + waits);
  }

  // A backend's call on this thread, its exception as the message (the thread must not end by one).
  template <class Call>
  static std::optional<std::string> attempt(Call call) {
    try {
      call();
      return std::nullopt;
    } catch (const std::exception& e) {
      const std::string what = e.what();
      return what.substr(0, what.find('\n'));
    } catch (...) {
      return std::string("an exception that is not a std::exception");
    }
  }

  void device_loop(int dev, int slot) {
    if (auto failure = attempt([&] { backend_.enter_device_thread(dev, slot); })) {
      std::lock_guard<std::mutex> lock(mu_);
      return fail("preparing device " + std::to_string(dev) + ": " + *failure);
    }
    std::unique_lock<std::mutex> lock(mu_);
    device_cv_[static_cast<std::size_t>(dev)].wait(lock, [this] { return go_; });
    OpId op = 0;
    std::vector<at::Tensor> inputs;
    std::vector<int> own_copies;  // devices this thread copies the op's output to, in order
    while (next_op(dev, &op, lock)) {
      inputs.clear();
      for (OpId src : g_.preds(op)) inputs.push_back(values_[static_cast<std::size_t>(dev)][static_cast<std::size_t>(src)]);
      ++active_;
      lock.unlock();
      Timed result;
      const std::optional<std::string> failure = attempt([&] { result = backend_.run_op(dev, op, inputs); });
      inputs.clear();  // its inputs may be freed as soon as their last reader released them
      lock.lock();
      --active_;
      if (failure) {
        fail("op " + g_.name(op) + ": " + *failure);
        return;
      }
      own_copies.clear();
      complete(op, dev, result.value, result.start, result.end, &own_copies);
      for (int to : own_copies)
        if (stop_ || !transfer(op, dev, to, result.value, lock)) return;  // stop_: another thread failed
    }
  }

  // Records a finished op; its transfers go to the link threads, or into `own_copies` when its
  // device copies itself.
  void complete(OpId op, int dev, at::Tensor value, double start, double end, std::vector<int>* own_copies) {  // mu_ held
    record_.ops[static_cast<std::size_t>(op)] = {op, dev, start, end};
    last_end_ = std::max(last_end_, end);
    for (OpId src : g_.preds(op)) release(dev, src);
    if (uses_[static_cast<std::size_t>(dev)][static_cast<std::size_t>(op)] > 0)
      values_[static_cast<std::size_t>(dev)][static_cast<std::size_t>(op)] = value;
    for (OpId dst : g_.succs(op)) {
      const int to = device(dst);
      if (to == dev) {
        if (--remaining_[static_cast<std::size_t>(dst)] == 0) make_ready(dst);
        continue;
      }
      char& sent = sent_[static_cast<std::size_t>(op) * static_cast<std::size_t>(d_) + static_cast<std::size_t>(to)];
      if (sent) continue;
      sent = 1;
      ++active_;
      if (copies_itself(dev)) {
        own_copies->push_back(to);
        continue;
      }
      const auto link = static_cast<std::size_t>(dev * d_ + to);
      link_queue_[link].push_back({op, value});
      link_cv_[link].notify_one();
    }
    if (++done_ == n_) {
      stop_ = true;
      wake_all();
    }
  }

  void release(int dev, OpId op) {  // mu_ held
    if (--uses_[static_cast<std::size_t>(dev)][static_cast<std::size_t>(op)] == 0)
      values_[static_cast<std::size_t>(dev)][static_cast<std::size_t>(op)] = at::Tensor();
  }

  void link_loop(int link) {
    const int from = link / d_, to = link % d_;
    if (auto failure = attempt([&] { backend_.enter_link_thread(from, to); })) {
      std::lock_guard<std::mutex> lock(mu_);
      return fail("preparing the link from device " + std::to_string(from) + " to " + std::to_string(to) + ": " + *failure);
    }
    std::unique_lock<std::mutex> lock(mu_);
    auto& queue = link_queue_[static_cast<std::size_t>(link)];
    auto& cv = link_cv_[static_cast<std::size_t>(link)];
    while (true) {
      cv.wait(lock, [&] { return stop_ || (go_ && !queue.empty()); });
      if (stop_) return;
      Transfer next = std::move(queue.front());
      queue.pop_front();
      if (!transfer(next.op, from, to, std::move(next.value), lock)) return;
    }
  }

  // Copies op's output from one device to another on this thread, then delivers it; false when the
  // copy failed (the run is then over). Called with mu_ held through `lock`, released meanwhile.
  bool transfer(OpId op, int from, int to, at::Tensor value, std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    const double bytes = static_cast<double>(value.numel()) * static_cast<double>(value.element_size());
    Timed copy;  // an exception must not leave the thread (out of memory for a large copy)
    const std::optional<std::string> failure = attempt([&] { copy = backend_.copy(from, to, value); });
    value = at::Tensor();
    lock.lock();
    --active_;
    if (failure) {
      fail("copying " + g_.name(op) + " from device " + std::to_string(from) + " to " + std::to_string(to) + ": " +
           *failure);
      return false;
    }
    record_.transfers.push_back({op, from, to, copy.start, copy.end, bytes});
    release(from, op);
    deliver(op, to, std::move(copy.value));
    return true;
  }

  void deliver(OpId op, int dev, at::Tensor value) {  // mu_ held
    values_[static_cast<std::size_t>(dev)][static_cast<std::size_t>(op)] = std::move(value);
    for (OpId dst : g_.succs(op))
      if (device(dst) == dev && --remaining_[static_cast<std::size_t>(dst)] == 0) make_ready(dst);
    check_stalled();
  }

  void collect_outputs(std::vector<OutputTensor>& outputs) const {
    outputs.clear();
    for (OpId op = 0; op < n_; ++op) {
      if (!keeps(op)) continue;
      at::Tensor value = values_[static_cast<std::size_t>(device(op))][static_cast<std::size_t>(op)]
                             .to(at::kCPU, at::kDouble)
                             .contiguous();
      OutputTensor out{op, value.sizes().vec(), {}};
      out.values.assign(value.data_ptr<double>(), value.data_ptr<double>() + value.numel());
      outputs.push_back(std::move(out));
    }
  }

  const Graph& g_;
  DeviceBackend& backend_;
  const Placement& placement_;
  const Cluster& cluster_;
  const ExecOptions& options_;
  const int n_, d_;
  std::vector<std::vector<int>> consumers_on_;  // [device][op]: edges from op into ops on device
  std::vector<int> links_used_;                 // directed links (from * d + to) whose threads copy

  std::mutex mu_;
  std::condition_variable done_cv_;
  std::vector<std::condition_variable> device_cv_, link_cv_;
  bool go_ = false, stop_ = false;
  std::string error_;
  int done_ = 0, waiting_ = 0, active_ = 0, device_threads_ = 0;
  std::uint64_t seq_ = 0;
  double last_end_ = 0;
  RunRecord record_;
  std::vector<std::vector<at::Tensor>> values_;  // [device][op]: the op's output held on the device
  std::vector<std::vector<int>> uses_;           // [device][op]: reads of that value still to come
  std::vector<char> sent_;                       // [op * d + device]: a transfer was started
  std::vector<int> remaining_;                   // per op: inputs not yet on its device
  std::vector<std::priority_queue<ReadyItem, std::vector<ReadyItem>, LaterFirst>> ready_;
  std::vector<std::deque<Transfer>> link_queue_;
  std::vector<char> is_ready_;       // fixed order: inputs present
  std::vector<std::size_t> next_;    // fixed order: position in each device's list
};

Status check_order(const Graph& graph, const Placement& placement, int devices, const ExecOptions& options) {
  if (!options.fixed_order) return Ok{};
  if (static_cast<int>(options.order.size()) != devices)
    return make_error("the fixed order has " + std::to_string(options.order.size()) + " device lists; the cluster has " +
                      std::to_string(devices) + " devices");
  std::vector<char> seen(static_cast<std::size_t>(graph.size()), 0);
  for (int dev = 0; dev < devices; ++dev)
    for (OpId op : options.order[static_cast<std::size_t>(dev)]) {
      if (op < 0 || op >= graph.size()) return make_error("the fixed order names op " + std::to_string(op) + ", which the graph lacks");
      if (placement.device[static_cast<std::size_t>(op)] != dev)
        return make_error("the fixed order lists " + graph.name(op) + " on device " + std::to_string(dev) +
                          " but the placement puts it on device " +
                          std::to_string(placement.device[static_cast<std::size_t>(op)]));
      if (seen[static_cast<std::size_t>(op)]++) return make_error("the fixed order lists " + graph.name(op) + " twice");
    }
  for (OpId op = 0; op < graph.size(); ++op)
    if (!seen[static_cast<std::size_t>(op)]) return make_error("the fixed order leaves out " + graph.name(op));
  return Ok{};
}

}  // namespace

namespace {

// The largest tensor the run makes for `op`, in bytes: its output, a parameter or input operand of
// its operation, or (an op without one) its proxy GEMM's operand of the op's FLOPs.
std::pair<double, const char*> largest_tensor(const Graph& graph, OpId op) {
  std::pair<double, const char*> largest{graph.output_bytes(op), "output"};
  if (const Operation* operation = graph.operation(op)) {
    for (const Operand& operand : operation->operands) {
      if (operand.source == Operand::Source::edge) continue;
      // What the device gets: the operand's slice (the whole tensor stays on the host), of int64
      // token ids or of the op's dtype (aten_kernels.cpp).
      double bytes = operand.integer ? 8.0 : dtype_bytes(operation->dtype);
      for (std::int64_t extent : sliced_shape(operand)) bytes *= static_cast<double>(extent);
      if (bytes > largest.first) largest = {bytes, "operand"};
    }
  } else if (const double n = static_cast<double>(proxy_gemm_side(graph.flops(op))); 4 * n * n > largest.first) {
    largest = {4 * n * n, "proxy GEMM operand"};  // n x n floats
  }
  return largest;
}

}  // namespace

Status check_tensors_fit(const Graph& graph, const Placement& placement, const Cluster& cluster) {
  for (OpId op = 0; op < graph.size(); ++op) {
    const int d = placement.device[op];
    const double memory = cluster.device(d).memory;
    const auto [bytes, what] = largest_tensor(graph, op);
    if (memory > 0 && bytes > memory)
      return make_error("op " + graph.name(op) + ": its " + what + " of " + format_bytes(bytes) + " does not fit device " +
                        std::to_string(d) + "'s memory (" + format_bytes(memory) + " in cluster " + cluster.name() + ")");
  }
  return Ok{};
}

Status check_placed_run(const Graph& graph, const Placement& placement, const Cluster& cluster, const ExecOptions& options) {
  if (auto fits = placement.check(graph, cluster, "placement"); !fits) return fits.error();
  if (auto fits = check_tensors_fit(graph, placement, cluster); !fits) return fits.error();  // before allocating them
  if (auto ordered = check_order(graph, placement, cluster.size(), options); !ordered) return ordered.error();
  if (options.repeats < 1) return make_error("repeats must be at least 1");
  return Ok{};
}

Result<Measurement> execute_placed(const Graph& graph, const Placement& placement, const Cluster& cluster,
                                   const ExecOptions& options, DeviceBackend& backend) {
  PlacedRun run(graph, placement, cluster, options, backend);
  Measurement m;
  m.backend = backend.name();
  m.layout = backend.layout();
  std::vector<RunRecord> runs;
  for (int i = 0; i < options.warmup + options.repeats; ++i) {
    const bool timed = i >= options.warmup, last = i + 1 == options.warmup + options.repeats;
    auto record = run.run(last && options.keep_outputs ? &m.outputs : nullptr);
    if (!record) return record.error();
    if (timed) runs.push_back(std::move(record.value()));
  }
  summarize_runs(std::move(runs), &m);
  return m;
}

}  // namespace gantry
