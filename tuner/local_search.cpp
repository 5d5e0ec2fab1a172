// Simulated annealing on the simulator itself, standing in for the DOPPLER paper's enumerative
// optimizer. Moves: one op to another device, two ops swapping devices and, when the runtime
// honours priorities, two ops swapping priorities. A worse candidate is accepted with probability
// exp(-relative loss / T), T cooling geometrically; after a long stretch without progress the walk
// returns to the best placement.
//
// List phase. With priority dispatch on identical single-stream devices and free transfers
// (P|prec|Cmax), a placement and its priorities are mostly redundant: Graham's list scheduling of
// one priority list gives a schedule that the simulator reproduces exactly (ListDecoder), and the
// decoder also says when each op became ready and started, which the moves below need (it costs
// about what a simulator run does: 4-6 us against 5-9 us for 100 tasks on 8 processors, about
// equal at 1000 tasks). There run() first anneals priority
// lists for the first kListShare of its progress: it starts from the best of the start's own
// priority order and a few classic list rules (bottom level with several tie-breaks, most
// descendants), and moves an op in the list (not a swap): to just before an op that started while
// it was ready and waiting (the move that can pull an op forward in the schedule), to a random
// place, or swaps two. Every new best is confirmed by the simulator. The rest of the progress
// anneals the best placement with the moves above, which also reach schedules that are not list
// schedules (a device idling while another device's op is ready).
#include "tuner/local_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "tuner/graph_levels.hpp"
#include "tuner/identical_schedule.hpp"

namespace gantry {

namespace {

constexpr double kListShare = 0.85;


}  // namespace

struct LocalSearch::Lists {
  ListDecoder decoder;
  std::vector<std::vector<OpId>> rules;  // start lists from classic priority rules
  std::vector<OpId> order, best_order;   // op at each list position
  std::vector<std::int32_t> rank;        // list position of each op
  std::vector<double> start, ready;      // of the current list's schedule
  std::vector<std::int32_t> machine;

  Lists(const PlacementProblem& p, std::vector<double> duration)
      : decoder(p.graph, duration, p.cluster.size()) {
    const Graph& g = p.graph;
    const int n = g.size();
    const std::vector<double> level = upward_ranks(g, p.costs);  // bottom level, own time included
    double longest = 0;
    for (double d : duration) longest = std::max(longest, d);
    const double scale = longest > 0 ? 1.0 / (2 * longest * (n + 1)) : 0;
    std::vector<double> hops(n, 0.0), descendants(n, 0.0), key(n);
    const auto& topo = g.topo_order();
    for (auto it = topo.rbegin(); it != topo.rend(); ++it)
      for (OpId s : g.succs(*it)) {
        hops[*it] = std::max(hops[*it], hops[s] + 1);
        descendants[*it] += 1 + descendants[s];  // paths, not distinct ops: a cheap proxy
      }
    rules.push_back(order_by_decreasing(g, level));
    for (OpId op = 0; op < n; ++op) key[op] = level[op] + duration[op] * scale;  // ties: longest first
    rules.push_back(order_by_decreasing(g, key));
    for (OpId op = 0; op < n; ++op) key[op] = level[op] + static_cast<double>(g.succs(op).size()) / (n + 1.0) * 1e-3 * (longest > 0 ? longest : 1);
    rules.push_back(order_by_decreasing(g, key));
    const double deepest = *std::max_element(level.begin(), level.end());  // n > 1 here
    for (OpId op = 0; op < n; ++op) key[op] = hops[op] * (2 * deepest + 1) + level[op];
    rules.push_back(order_by_decreasing(g, key));
    for (OpId op = 0; op < n; ++op) key[op] = std::min(descendants[op], 1e15) + level[op] * 1e-9;
    rules.push_back(order_by_decreasing(g, key));
    rank.assign(n, 0);
    start.assign(n, 0.0);
    ready.assign(n, 0.0);
    machine.assign(n, 0);
  }

  void set_order(const std::vector<OpId>& o) {
    order = o;
    for (int i = 0; i < static_cast<int>(order.size()); ++i) rank[order[i]] = i;
  }
  // Moves the op at position `from` to position `to`, shifting the ones between.
  void shift(int from, int to) {
    const OpId op = order[from];
    if (from < to) {
      for (int i = from; i < to; ++i) rank[order[i] = order[i + 1]] = i;
    } else {
      for (int i = from; i > to; --i) rank[order[i] = order[i - 1]] = i;
    }
    order[to] = op;
    rank[op] = to;
  }
  void swap(int i, int j) {
    std::swap(order[i], order[j]);
    rank[order[i]] = i;
    rank[order[j]] = j;
  }
  void keep_schedule() {
    start = decoder.start();
    ready = decoder.ready();
    machine = decoder.machine();
  }
  Placement placement() const {
    Placement p;
    p.device = machine;
    p.priority.resize(rank.size());
    for (std::size_t op = 0; op < rank.size(); ++op) p.priority[op] = -static_cast<double>(rank[op]);
    return p;
  }
};

LocalSearch::LocalSearch(const PlacementProblem& problem, std::uint64_t seed)
    : problem_(problem),
      sim_(problem.graph, problem.costs, problem.cluster, problem.sim),
      rng_(seed),
      with_priority_(problem.sim.dispatch == Dispatch::priority) {
  if (with_priority_ && problem.graph.size() > 1 && problem.cluster.size() > 1 &&
      is_identical_without_communication(problem))
    lists_ = std::make_unique<Lists>(problem, op_durations(problem));
}

LocalSearch::~LocalSearch() = default;

namespace {

// Relative loss of a candidate against the current makespan; a zero makespan (a graph of free ops)
// compares absolutely instead of dividing by zero.
double relative_loss(double candidate, double current) {
  if (current > 0) return (candidate - current) / current;
  return candidate > current ? std::numeric_limits<double>::infinity() : 0.0;
}

// What both annealing loops share: the geometric cooling along the run's progress, the
// Metropolis acceptance of a relative loss, and how long a walk goes without a new best before it
// returns to the best.
double temperature_at(double progress, double t_start, double t_end) {
  return t_start * std::pow(t_end / t_start, std::max(0.0, progress));
}

bool accepts(double loss, double temperature, std::mt19937_64& rng) {
  return loss <= 0 || std::uniform_real_distribution<double>(0.0, 1.0)(rng) < std::exp(-loss / temperature);
}

long steps_before_restart(int ops) { return std::max<long>(2000, 20L * ops); }

}  // namespace

AnnealResult LocalSearch::run(Placement current, const std::function<double(long)>& progress, double t_start,
                              double t_end, const std::function<void(long, double)>& on_improvement,
                              long max_evaluations) {
  const int n = problem_.graph.size(), devices = problem_.cluster.size();
  if (with_priority_ && !current.has_priority()) current.priority = upward_ranks(problem_.graph, problem_.costs);
  if (!with_priority_) current.priority.clear();
  Status valid = sim_.check(current);  // once: every candidate below is a valid placement too
  if (!valid) throw std::invalid_argument("search start: " + valid.error().message);
  auto evaluate = [&] { return sim_.makespan(current.device.data(), with_priority_ ? current.priority.data() : nullptr); };

  AnnealResult result;
  double current_ms = evaluate();
  result.start_makespan = result.best_makespan = current_ms;
  result.best = current;
  result.evaluations = 1;
  double sum = current_ms;
  if (lists_) {
    run_lists(current, result, sum, progress, kListShare, t_start, t_end, on_improvement, max_evaluations);
    current = result.best;  // the rest anneals around the best list schedule
    current_ms = result.best_makespan;
  }
  long since_best = 0;
  const long restart_after = steps_before_restart(n);
  double temperature = t_start;
  std::uniform_int_distribution<int> pick_op(0, n - 1);
  std::uniform_int_distribution<int> pick_device(0, std::max(0, devices - 2));
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  for (bool first = true;; first = false) {
    if (max_evaluations > 0 && result.evaluations >= max_evaluations) break;
    if (first || (result.evaluations & 31) == 1) {
      const double p = progress(result.evaluations);
      if (p >= 1.0) break;
      temperature = temperature_at(p, t_start, t_end);
    }
    const double r = unit(rng_);
    const int a = pick_op(rng_), b = pick_op(rng_);
    const std::int32_t old_a = current.device[a], old_b = current.device[b];
    bool priority_move = false;
    if (with_priority_ && r < 0.35) {
      priority_move = true;
      std::swap(current.priority[a], current.priority[b]);
    } else if (devices > 1 && (r < 0.75 || old_a == old_b)) {
      const int d = pick_device(rng_);
      current.device[a] = d >= old_a ? d + 1 : d;  // any device but the current one
    } else {
      std::swap(current.device[a], current.device[b]);
    }
    const double ms = evaluate();
    ++result.evaluations;
    sum += ms;
    if (accepts(relative_loss(ms, current_ms), temperature, rng_)) {
      current_ms = ms;
      if (ms < result.best_makespan) {
        result.best_makespan = ms;
        result.best = current;
        since_best = 0;
        if (on_improvement) on_improvement(result.evaluations, ms);
        continue;
      }
    } else if (priority_move) {
      std::swap(current.priority[a], current.priority[b]);
    } else {
      current.device[a] = old_a;
      current.device[b] = old_b;
    }
    if (++since_best > restart_after) {
      current = result.best;
      current_ms = result.best_makespan;
      since_best = 0;
    }
  }
  result.mean_makespan = sum / result.evaluations;
  result.last = std::move(current);
  result.last_makespan = current_ms;
  return result;
}

void LocalSearch::run_lists(const Placement& start, AnnealResult& result, double& sum,
                            const std::function<double(long)>& progress, double until, double t_start, double t_end,
                            const std::function<void(long, double)>& on_improvement, long max_evaluations) {
  Lists& L = *lists_;
  const int n = problem_.graph.size();
  auto out_of_budget = [&] { return max_evaluations > 0 && result.evaluations >= max_evaluations; };
  L.best_order.clear();
  double list_ms = std::numeric_limits<double>::infinity();
  // A list schedule better than the best placement so far becomes the best once the simulator
  // agrees (it always should; a disagreement keeps the simulator's number).
  auto consider_best = [&](double ms) {
    if (ms >= result.best_makespan) return;
    Placement p = L.placement();
    const double simulated = sim_.makespan(p.device.data(), p.priority.data());
    if (simulated < result.best_makespan) {
      result.best_makespan = simulated;
      result.best = std::move(p);
      if (on_improvement) on_improvement(result.evaluations, simulated);
    }
  };
  auto try_start = [&](const std::vector<OpId>& order) {
    if (out_of_budget()) return;
    L.set_order(order);
    const double ms = L.decoder.decode(L.rank.data());
    ++result.evaluations;
    sum += ms;
    if (ms < list_ms) {
      list_ms = ms;
      L.best_order = order;
      L.keep_schedule();
    }
  };
  try_start(order_by_decreasing(problem_.graph, start.priority));
  for (const auto& rule : L.rules) try_start(rule);
  if (L.best_order.empty()) return;
  L.set_order(L.best_order);
  double cur = list_ms;
  consider_best(cur);
  double best_list = cur;

  long since_best = 0;
  const long restart_after = steps_before_restart(n);
  double temperature = t_start;
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  long checks = 0;
  for (;;) {
    if (out_of_budget()) break;
    if ((checks++ & 31) == 0) {
      const double p = progress(result.evaluations);
      if (p >= until) break;
      temperature = temperature_at(p, t_start, t_end);
    }
    const double r = unit(rng_);
    int from = -1, to = -1;
    bool swapped = false;
    if (r < 0.6) {  // pull a waiting op ahead of one that started while it waited
      for (int tries = 0; tries < 8 && from < 0; ++tries) {
        const OpId a = pick(rng_);
        if (L.start[a] > L.ready[a]) from = L.rank[a];
      }
      if (from >= 0) {
        const OpId a = L.order[from];
        int seen = 0;
        for (OpId b = 0; b < n; ++b)
          if (b != a && L.start[b] >= L.ready[a] && L.start[b] < L.start[a] && L.rank[b] < from &&
              std::uniform_int_distribution<int>(0, seen++)(rng_) == 0)
            to = L.rank[b];
        if (to < 0) from = -1;
      }
    }
    if (from < 0) {
      from = pick(rng_);
      do to = pick(rng_);
      while (to == from && n > 1);
      swapped = r > 0.85;
    }
    if (swapped) L.swap(from, to);
    else L.shift(from, to);
    const double ms = L.decoder.decode(L.rank.data());
    ++result.evaluations;
    sum += ms;
    if (accepts(relative_loss(ms, cur), temperature, rng_)) {
      cur = ms;
      L.keep_schedule();
      if (ms < best_list) {
        best_list = ms;
        L.best_order = L.order;
        since_best = 0;
        consider_best(ms);
        continue;
      }
    } else if (swapped) {
      L.swap(from, to);
    } else {
      L.shift(to, from);
    }
    if (++since_best > restart_after && !out_of_budget()) {
      L.set_order(L.best_order);
      cur = L.decoder.decode(L.rank.data());
      ++result.evaluations;
      sum += cur;
      L.keep_schedule();
      since_best = 0;
    }
  }
}

// The budget covers the whole method: the heuristics that pick the start spend from it first
// (best_heuristic stops early when it runs out) and the annealing gets what is left.
PlacementOutcome place_search(const PlacementProblem& problem, const SearchBudget& budget, const PlacementOutcome* start) {
  const auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(); };
  const PlacementOutcome seed = start ? *start : best_heuristic(problem, budget);
  const long spent = start ? 0 : seed.evaluations;
  const double seconds = budget.seconds > 0 || budget.evaluations > 0 ? budget.seconds : 2.0;
  const long left = budget.evaluations > 0 ? budget.evaluations - spent : 0;
  const double search_start = elapsed();  // one reading: the check and the progress agree
  if ((budget.evaluations > 0 && left <= 0) || (seconds > 0 && search_start >= seconds)) {
    PlacementOutcome outcome = seed;  // the heuristics used the whole budget
    outcome.method = "search";
    outcome.evaluations = spent;
    outcome.seconds = elapsed();
    return outcome;
  }
  auto progress = [&](long evaluations) {
    double p = 0;
    if (left > 0) p = static_cast<double>(evaluations) / left;
    if (seconds > 0) p = std::max(p, (elapsed() - search_start) / (seconds - search_start));
    return p;
  };
  auto improved = [&](long evaluations, double makespan) {
    if (budget.on_improvement) budget.on_improvement(elapsed(), spent + evaluations, makespan);
  };
  LocalSearch search(problem, budget.seed);
  AnnealResult r = search.run(seed.placement, progress, 0.02, 2e-4, improved, left);
  return PlacementOutcome{"search", r.best, r.best_makespan, -1, r.evaluations + spent, elapsed()};
}

}  // namespace gantry
