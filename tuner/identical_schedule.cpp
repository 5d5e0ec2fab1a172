#include "tuner/identical_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_set>

namespace gantry {

bool is_identical_without_communication(const PlacementProblem& problem) {
  const SimOptions& sim = problem.sim;
  if (sim.doppler || sim.noise_sigma > 0 || sim.dispatch == Dispatch::fixed_order) return false;
  const Cluster& cluster = problem.cluster;
  const CostTable& costs = problem.costs;
  if (costs.has_co_run_slowdown()) return false;  // list schedules know no slowdown beside busy devices
  const int devices = cluster.size();
  for (int d = 0; d < devices; ++d) {
    const int streams = sim.streams > 0 ? sim.streams : cluster.device(d).streams;
    if (streams != 1) return false;
  }
  const int n = problem.graph.size();
  for (OpId op = 0; op < n; ++op)
    for (int d = 1; d < devices; ++d)
      if (costs.op_time(op, d) != costs.op_time(op, 0)) return false;
  double latency = 0, inv_bandwidth = 0;
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b)
      if (a != b) {
        latency = std::max(latency, costs.latency(a, b));
        inv_bandwidth = std::max(inv_bandwidth, costs.inv_bandwidth(a, b));
      }
  for (EdgeId e = 0; e < problem.graph.num_edges(); ++e) {
    const double fixed = costs.edge_fixed(e);
    if (fixed >= 0 ? fixed != 0 : latency != 0 || costs.edge_bytes(e) * inv_bandwidth != 0) return false;
  }
  return true;
}

std::vector<double> op_durations(const PlacementProblem& problem) {
  std::vector<double> duration(problem.graph.size());
  for (OpId op = 0; op < problem.graph.size(); ++op) duration[op] = problem.costs.op_time(op, 0);
  return duration;
}

ListDecoder::ListDecoder(const Graph& graph, std::vector<double> duration, int processors)
    : graph_(graph), duration_(std::move(duration)), processors_(std::max(1, processors)) {
  const int n = graph.size();
  machine_.assign(n, 0);
  pending_.assign(n, 0);
  start_.assign(n, 0.0);
  ready_.assign(n, 0.0);
  free_.reserve(processors_);
  heap_.reserve(n);
  events_.reserve(processors_ + 1);
}

double ListDecoder::decode(const std::int32_t* rank) {
  const int n = graph_.size();
  heap_.clear();
  events_.clear();
  free_.clear();
  for (int m = processors_ - 1; m >= 0; --m) free_.push_back(m);
  auto by_rank = [rank](OpId a, OpId b) { return rank[a] > rank[b]; };  // min-heap on rank
  auto by_time = [](const std::pair<double, OpId>& a, const std::pair<double, OpId>& b) { return a.first > b.first; };
  for (OpId op = 0; op < n; ++op) {
    pending_[op] = static_cast<std::int32_t>(graph_.preds(op).size());
    ready_[op] = 0;
    if (pending_[op] == 0) heap_.push_back(op);
  }
  std::make_heap(heap_.begin(), heap_.end(), by_rank);
  double now = 0, makespan = 0;
  for (;;) {
    while (!free_.empty() && !heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), by_rank);
      const OpId op = heap_.back();
      heap_.pop_back();
      machine_[op] = free_.back();
      free_.pop_back();
      start_[op] = now;
      events_.emplace_back(now + duration_[op], op);
      std::push_heap(events_.begin(), events_.end(), by_time);
    }
    if (events_.empty()) break;
    now = events_.front().first;
    makespan = std::max(makespan, now);
    // Every completion at this instant before any dispatch, as in the simulator.
    while (!events_.empty() && events_.front().first == now) {
      std::pop_heap(events_.begin(), events_.end(), by_time);
      const OpId op = events_.back().second;
      events_.pop_back();
      free_.push_back(machine_[op]);
      for (OpId v : graph_.succs(op)) {
        ready_[v] = std::max(ready_[v], now);
        if (--pending_[v] == 0) {
          heap_.push_back(v);
          std::push_heap(heap_.begin(), heap_.end(), by_rank);
        }
      }
    }
  }
  return makespan;
}

double IdenticalBounds::best() const { return std::max({critical_path, work, heads_tails, energetic}); }

namespace {

bool all_integral(const std::vector<double>& duration) {
  for (double d : duration)
    if (d != std::floor(d) || d > 1e12) return false;
  return true;
}

// Time for `work` on `processors` machines, rounded up when times are integers.
double share(double work, int processors, bool integral) {
  const double t = work / processors;
  return integral ? std::ceil(t - 1e-9) : t;
}

// heads[j]: earliest start of j in any schedule; `forward` = false gives tails (time after j ends)
// by running on the reversed graph. Each op's bound is the longest chain into it, raised by
// t + work(ancestors with head >= t) / P for every such t: those ancestors start at t or later and
// must all end before the op starts.
std::vector<double> strengthened_heads(const Graph& g, const std::vector<double>& duration, int processors,
                                       bool integral, bool forward) {
  const int n = g.size();
  std::vector<OpId> order = g.topo_order();
  if (!forward) std::reverse(order.begin(), order.end());
  std::vector<double> head(n, 0.0);
  const bool sets = n <= 5000;  // ancestor bitsets: n^2 / 8 bytes
  const int words = (n + 63) / 64;
  std::vector<std::uint64_t> anc(sets ? static_cast<std::size_t>(n) * words : 0, 0);
  std::vector<std::pair<double, double>> items;  // (head, duration) of the ancestors
  for (OpId j : order) {
    const Span<OpId> before = forward ? g.preds(j) : g.succs(j);
    std::uint64_t* mine = sets ? &anc[static_cast<std::size_t>(j) * words] : nullptr;
    double h = 0;
    for (OpId i : before) {
      h = std::max(h, head[i] + duration[i]);
      if (!sets) continue;
      const std::uint64_t* theirs = &anc[static_cast<std::size_t>(i) * words];
      for (int w = 0; w < words; ++w) mine[w] |= theirs[w];
      mine[i / 64] |= std::uint64_t{1} << (i % 64);
    }
    if (sets && !before.empty()) {
      items.clear();
      for (int w = 0; w < words; ++w)
        for (std::uint64_t bits = mine[w]; bits; bits &= bits - 1) {
          const int i = w * 64 + __builtin_ctzll(bits);
          items.emplace_back(head[i], duration[i]);
        }
      std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      double work = 0;
      for (std::size_t k = 0; k < items.size(); ++k) {
        work += items[k].second;
        if (k + 1 < items.size() && items[k + 1].first == items[k].first) continue;
        h = std::max(h, items[k].first + share(work, processors, integral));
      }
    }
    head[j] = h;
  }
  return head;
}

// Energetic reasoning: with makespan C every op runs inside [head, C - tail]; over any interval
// the work that must fall inside it cannot exceed P times its length.
bool energetic_feasible(const std::vector<double>& head, const std::vector<double>& tail,
                        const std::vector<double>& duration, int processors, double C) {
  const int n = static_cast<int>(head.size());
  std::vector<double> lo, hi;
  for (int j = 0; j < n; ++j) {
    const double deadline = C - tail[j];
    if (head[j] + duration[j] > deadline) return false;
    lo.push_back(head[j]);
    lo.push_back(deadline - duration[j]);
    lo.push_back(head[j] + duration[j]);
    hi.push_back(deadline);
    hi.push_back(head[j] + duration[j]);
    hi.push_back(deadline - duration[j]);
  }
  std::sort(lo.begin(), lo.end());
  lo.erase(std::unique(lo.begin(), lo.end()), lo.end());
  std::sort(hi.begin(), hi.end());
  hi.erase(std::unique(hi.begin(), hi.end()), hi.end());
  for (double t1 : lo)
    for (double t2 : hi) {
      if (t2 <= t1) continue;
      const double capacity = processors * (t2 - t1);
      double need = 0;
      for (int j = 0; j < n && need <= capacity; ++j) {
        const double left = head[j] + duration[j] - t1, right = t2 - (C - tail[j]) + duration[j];
        need += std::max(0.0, std::min({duration[j], t2 - t1, left, right}));
      }
      if (need > capacity + 1e-9) return false;
    }
  return true;
}

}  // namespace

IdenticalBounds identical_lower_bounds(const Graph& g, const std::vector<double>& duration, int processors) {
  IdenticalBounds b;
  const int n = g.size();
  const bool integral = all_integral(duration);
  std::vector<double> finish(n, 0.0);
  double total = 0;
  for (OpId j : g.topo_order()) {
    double start = 0;
    for (OpId i : g.preds(j)) start = std::max(start, finish[i]);
    finish[j] = start + duration[j];
    b.critical_path = std::max(b.critical_path, finish[j]);
    total += duration[j];
  }
  b.work = share(total, processors, integral);
  const std::vector<double> head = strengthened_heads(g, duration, processors, integral, true);
  const std::vector<double> tail = strengthened_heads(g, duration, processors, integral, false);
  for (OpId j = 0; j < n; ++j) b.heads_tails = std::max(b.heads_tails, head[j] + duration[j] + tail[j]);
  b.energetic = b.heads_tails;
  if (integral && n <= 2000) {
    double C = std::max({b.critical_path, b.work, b.heads_tails});
    while (!energetic_feasible(head, tail, duration, processors, C)) C += 1;
    b.energetic = C;
  }
  return b;
}

namespace {

class BranchAndBound {
 public:
  BranchAndBound(const Graph& g, const std::vector<double>& duration, int processors, long node_limit)
      : g_(g), p_(duration), m_(processors), limit_(node_limit), n_(g.size()) {
    integral_ = all_integral(duration);
    const auto& topo = g.topo_order();
    position_.assign(n_, 0);
    for (int k = 0; k < n_; ++k) position_[topo[k]] = k;
    // Static heads and tails (plain longest chains; the root bound uses the strong ones).
    head_.assign(n_, 0.0);
    tail_.assign(n_, 0.0);
    for (OpId j : topo)
      for (OpId i : g.preds(j)) head_[j] = std::max(head_[j], head_[i] + p_[i]);
    for (auto it = topo.rbegin(); it != topo.rend(); ++it)
      for (OpId s : g.succs(*it)) tail_[*it] = std::max(tail_[*it], tail_[s] + p_[s]);
    pending_.assign(n_, 0);
    for (OpId j = 0; j < n_; ++j) pending_[j] = static_cast<int>(g.preds(j).size());
    ready_.assign(n_, 0.0);
    finish_.assign(n_, -1.0);
    machine_.assign(n_, -1);
    start_.assign(n_, 0.0);
    free_.assign(m_, 0.0);
    remaining_work_ = std::accumulate(p_.begin(), p_.end(), 0.0);
    est_.assign(n_, 0.0);
  }

  ExactSchedule solve() {
    const IdenticalBounds bounds = identical_lower_bounds(g_, p_, m_);
    result_.lower_bound = bounds.best();
    best_ = std::numeric_limits<double>::infinity();
    dfs(0, -std::numeric_limits<double>::infinity(), -1);
    result_.makespan = best_;
    result_.proven = !aborted_;
    if (result_.proven) result_.lower_bound = best_;
    result_.nodes = nodes_;
    return result_;
  }

 private:
  // Smallest C with work <= sum over machines of (C - base_m)^+, base_m = max(free_m, t0).
  double load_bound(double t0) const {
    std::vector<double> base(free_);
    for (double& b : base) b = std::max(b, t0);
    std::sort(base.begin(), base.end());
    double work = remaining_work_;
    double level = base[0];
    for (int k = 1; k <= m_; ++k) {
      const double next = k < m_ ? base[k] : std::numeric_limits<double>::infinity();
      const double room = (next - level) * k;
      if (work <= room) {
        level += work / k;
        break;
      }
      work -= room;
      level = next;
    }
    return integral_ ? std::ceil(level - 1e-9) : level;
  }

  double bound(double t0) {
    double lb = *std::max_element(free_.begin(), free_.end());
    const double floor_start = std::max(t0, *std::min_element(free_.begin(), free_.end()));
    for (OpId j : g_.topo_order()) {
      if (finish_[j] >= 0) continue;
      double e = std::max({head_[j], floor_start, ready_[j]});
      for (OpId i : g_.preds(j))
        if (finish_[i] < 0) e = std::max(e, est_[i] + p_[i]);
      est_[j] = e;
      lb = std::max(lb, e + p_[j] + tail_[j]);
    }
    return std::max(lb, load_bound(t0));
  }

  std::string key(double t0, int last) const {
    std::vector<double> sorted(free_);
    std::sort(sorted.begin(), sorted.end());
    std::string k;
    auto put = [&](const void* data, std::size_t size) { k.append(static_cast<const char*>(data), size); };
    put(&t0, sizeof t0);
    put(&last, sizeof last);
    put(sorted.data(), sorted.size() * sizeof(double));
    for (OpId j = 0; j < n_; ++j) {
      const double v = finish_[j] >= 0 ? -1.0 : ready_[j];
      put(&v, sizeof v);
    }
    return k;
  }

  void dfs(int scheduled, double t0, int last) {
    if (aborted_) return;
    if (limit_ > 0 && nodes_ >= limit_) {
      aborted_ = true;
      return;
    }
    ++nodes_;
    if (scheduled == n_) {
      const double makespan = *std::max_element(free_.begin(), free_.end());
      if (makespan < best_) {
        best_ = makespan;
        result_.machine = machine_;
        result_.start = start_;
      }
      return;
    }
    if (bound(t0) >= best_ || best_ <= result_.lower_bound) return;
    if (memo_.size() < kMemoLimit) {
      // Finish times of the schedule so far only matter through the state in the key.
      if (!memo_.insert(key(t0, last)).second) return;
    }
    const int first_free = static_cast<int>(std::min_element(free_.begin(), free_.end()) - free_.begin());
    const double free_at = free_[first_free];
    // Candidates: ready ops whose start keeps the list in (start, topological position) order,
    // the most critical (longest remaining chain) first.
    std::vector<std::pair<double, OpId>> candidates;
    for (OpId j = 0; j < n_; ++j) {
      if (finish_[j] >= 0 || pending_[j] > 0) continue;
      const double s = std::max(ready_[j], free_at);
      if (s < t0 || (s == t0 && position_[j] < last)) continue;
      candidates.emplace_back(-(p_[j] + tail_[j]), j);
    }
    std::sort(candidates.begin(), candidates.end());
    for (const auto& candidate : candidates) {
      const OpId j = candidate.second;
      const double s = std::max(ready_[j], free_at);
      const double end = s + p_[j];
      // Place j on the first free machine.
      free_[first_free] = end;
      finish_[j] = end;
      machine_[j] = first_free;
      start_[j] = s;
      remaining_work_ -= p_[j];
      std::vector<double> saved;
      for (OpId v : g_.succs(j)) {
        --pending_[v];
        saved.push_back(ready_[v]);
        ready_[v] = std::max(ready_[v], end);
      }
      dfs(scheduled + 1, s, position_[j]);
      std::size_t k = 0;
      for (OpId v : g_.succs(j)) {
        ++pending_[v];
        ready_[v] = saved[k++];
      }
      remaining_work_ += p_[j];
      finish_[j] = -1;
      machine_[j] = -1;
      free_[first_free] = free_at;
      if (aborted_ || best_ <= result_.lower_bound) return;
    }
  }

  static constexpr std::size_t kMemoLimit = 4000000;
  const Graph& g_;
  const std::vector<double>& p_;
  const int m_;
  const long limit_;
  const int n_;
  bool integral_ = false;
  std::vector<int> position_, pending_, machine_;
  std::vector<double> head_, tail_, ready_, finish_, start_, free_, est_;
  double remaining_work_ = 0;
  double best_ = 0;
  long nodes_ = 0;
  bool aborted_ = false;
  std::unordered_set<std::string> memo_;
  ExactSchedule result_;
};

}  // namespace

ExactSchedule solve_identical_exact(const Graph& graph, const std::vector<double>& duration, int processors,
                                    long node_limit) {
  return BranchAndBound(graph, duration, processors, node_limit).solve();
}

}  // namespace gantry
