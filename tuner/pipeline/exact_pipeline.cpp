#include "tuner/pipeline/exact_pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>

#include "sim/pipeline_evaluator.hpp"

namespace gantry {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxExactTasks = 3072;  // its search buffers grow with tasks x stages
constexpr int kMaxRecomputeDevices = 16;       // sets of recomputing devices searched: 2^devices

// The best per-device orders of one (partition, placement), searched with a shared bound.
class OrderSearch {
 public:
  OrderSearch(const PipelineScheme& shape, const StageCosts& costs, bool contention,
              std::chrono::steady_clock::time_point deadline, std::int64_t node_limit)
      : S_(shape.num_stages()), D_(shape.num_devices()), M_(shape.num_microbatches), placement_(shape.placement),
        c_(costs), contention_(contention), deadline_(deadline), node_limit_(node_limit) {
    const int tasks = 3 * M_ * S_;
    ready_.assign(tasks, 0.0);
    next_.assign(3 * S_, 0);
    free_.assign(D_, 0.0);
    memory_.assign(D_, 0.0);
    work_.assign(D_, 0.0);
    room_.assign(D_, kInf);
    link_.assign(static_cast<std::size_t>(D_) * D_, 0.0);
    order_.assign(D_, {});
    candidates_.resize(static_cast<std::size_t>(tasks) * 3 * S_);
    for (int s = 0; s < S_; ++s) work_[placement_[s]] += M_ * (c_.f[s] + c_.b[s] + c_.w[s]);
    for (int d = 0; d < D_ && d < static_cast<int>(c_.max_mem.size()); ++d)
      if (c_.max_mem[d] > 0) room_[d] = c_.max_mem[d];
    for (int s = 0; s < S_; ++s) room_[placement_[s]] -= c_.static_memory[s];
  }

  // Searches below `bound`; true when the whole tree was searched (no limit hit).
  bool run(double& bound, std::vector<std::vector<PipeTask>>& best_order, std::int64_t& nodes) {
    bound_ = &bound;
    best_ = &best_order;
    nodes_ = &nodes;
    for (int d = 0; d < D_; ++d)
      if (room_[d] < 0) return true;  // the static memory alone does not fit: nothing to search
    descend(0, -kInf, -1);
    return !stopped_;
  }

  // Whether the memory limit cut a branch: without, the search found the best order with no limit.
  bool memory_cut() const { return memory_cut_; }

 private:
  int id(int kind, int m, int s) const { return (kind * M_ + m) * S_ + s; }

  struct Undo {
    double* slot;
    double old;
  };

  // The inputs of (kind, m, s) are appended: F after F of the stage before, B after the B of the
  // stage after (the last stage's after its F), W after its B.
  bool inputs_done(int kind, int m, int s) const {
    if (kind == 0) return s == 0 || next_[0 * S_ + s - 1] > m;
    if (kind == 1) return s == S_ - 1 ? next_[0 * S_ + s] > m : next_[1 * S_ + s + 1] > m;
    return next_[1 * S_ + s] > m;
  }

  // Delivers the output of (kind, m, s), ended at `end` on its device, to a consumer at stage `to`.
  void deliver(int consumer, int from_stage, int to_stage, double end, std::vector<Undo>& undo) {
    const int a = placement_[from_stage], b = placement_[to_stage];
    double arrival = end;
    if (a != b) {
      double* link = contention_ ? &link_[static_cast<std::size_t>(a) * D_ + b] : nullptr;
      if (link) undo.push_back({link, *link});
      arrival = hand_off_arrival(end, c_.comm[std::min(from_stage, to_stage)], link);
    }
    undo.push_back({&ready_[consumer], ready_[consumer]});
    ready_[consumer] = std::max(ready_[consumer], arrival);
  }

  void descend(int appended, double last_start, int last_device) {
    if (stopped_) return;
    if (++*nodes_ % 4096 == 0 &&
        (std::chrono::steady_clock::now() > deadline_ || (node_limit_ > 0 && *nodes_ > node_limit_))) {
      stopped_ = true;
      return;
    }
    if (appended == 3 * M_ * S_) {
      double makespan = 0;
      for (double f : free_) makespan = std::max(makespan, f);
      if (makespan < *bound_) {
        *bound_ = makespan;
        *best_ = order_;
      }
      return;
    }
    // No schedule below here ends before the work left on some device does.
    for (int d = 0; d < D_; ++d)
      if (work_[d] > 0 && std::max(free_[d], last_start) + work_[d] >= *bound_ * (1 - 1e-12)) return;
    // Candidates: the next microbatch of each (kind, stage) whose inputs are appended, started no
    // earlier than the last appended task (ties: a higher device).
    // This depth's candidates live in a buffer of the search, not on the stack: the recursion
    // goes 3 x microbatches x stages deep.
    Candidate* list = candidates_.data() + static_cast<std::size_t>(appended) * 3 * S_;
    int count = 0;
    for (int kind = 0; kind < 3; ++kind)
      for (int s = 0; s < S_; ++s) {
        const int m = next_[kind * S_ + s];
        if (m >= M_ || !inputs_done(kind, m, s)) continue;
        const int d = placement_[s];
        const double start = std::max(free_[d], ready_[id(kind, m, s)]);
        if (start < last_start || (start == last_start && d < last_device)) continue;
        list[count++] = {start, kind, s, d};
      }
    std::sort(list, list + count, [](const Candidate& a, const Candidate& b) { return a.start < b.start; });
    for (int i = 0; i < count && !stopped_; ++i) {
      const auto [start, kind, s, d] = list[i];
      const TaskCost cost = task_cost(static_cast<PipeOp>(kind), s, c_);  // kinds 0, 1, 2 are F, B, W
      const double memory_before = memory_[d] + cost.alloc;
      if (memory_before > room_[d] * (1 + 1e-12) + 1e-9) {  // memory depends on the order only
        memory_cut_ = true;
        continue;
      }
      const int m = next_[kind * S_ + s];
      const double duration = cost.time, end = start + duration;
      std::vector<Undo> undo;
      const double free_before = free_[d], memory_was = memory_[d];
      free_[d] = end;
      memory_[d] = memory_before - cost.release;
      work_[d] -= duration;
      ++next_[kind * S_ + s];
      order_[d].push_back(PipeTask{static_cast<PipeOp>(kind), m, s});
      if (kind == 0) deliver(s + 1 < S_ ? id(0, m, s + 1) : id(1, m, s), s, s + 1 < S_ ? s + 1 : s, end, undo);
      if (kind == 1) {
        if (s > 0) deliver(id(1, m, s - 1), s, s - 1, end, undo);
        deliver(id(2, m, s), s, s, end, undo);
      }
      descend(appended + 1, start, d);
      for (auto u = undo.rbegin(); u != undo.rend(); ++u) *u->slot = u->old;
      order_[d].pop_back();
      --next_[kind * S_ + s];
      work_[d] += duration;
      memory_[d] = memory_was;
      free_[d] = free_before;
    }
  }

  const int S_, D_, M_;
  const std::vector<int>& placement_;
  const StageCosts& c_;
  const bool contention_;
  const std::chrono::steady_clock::time_point deadline_;
  const std::int64_t node_limit_;
  std::vector<double> ready_, free_, memory_, work_, room_, link_;
  std::vector<int> next_;  // (kind, stage) -> next microbatch (microbatches in order, as the ZB ILP)
  std::vector<std::vector<PipeTask>> order_;
  struct Candidate {
    double start;
    int kind, s, d;
  };
  std::vector<Candidate> candidates_;  // depth -> up to 3 x stages candidates
  double* bound_ = nullptr;
  std::vector<std::vector<PipeTask>>* best_ = nullptr;
  std::int64_t* nodes_ = nullptr;
  bool stopped_ = false;
  bool memory_cut_ = false;
};

// Every composition of `layers` into `stages` non-empty consecutive ranges, until `visit`
// returns false; false when it was stopped.
bool for_each_partition(int layers, int stages, const std::function<bool(const Partition&)>& visit) {
  Partition p;
  std::function<bool(int, int)> place = [&](int first, int left) {
    if (left == 1) {
      p.emplace_back(first, layers);
      const bool go_on = visit(p);
      p.pop_back();
      return go_on;
    }
    for (int end = first + 1; end <= layers - (left - 1); ++end) {
      p.emplace_back(first, end);
      const bool go_on = place(end, left - 1);
      p.pop_back();
      if (!go_on) return false;
    }
    return true;
  };
  return place(0, stages);
}

// Every map of `stages` stages to `devices` devices giving each device 1 to `max_chunks` stages,
// until `visit` returns false; false when it was stopped.
bool for_each_placement(int stages, int devices, int max_chunks, const std::function<bool(const std::vector<int>&)>& visit) {
  std::vector<int> map(stages, 0), count(devices, 0);
  std::function<bool(int)> assign = [&](int s) {
    if (s == stages) {
      for (int c : count)
        if (c < 1) return true;
      return visit(map);
    }
    for (int d = 0; d < devices; ++d) {
      if (count[d] == max_chunks) continue;
      map[s] = d;
      ++count[d];
      const bool go_on = assign(s + 1);
      --count[d];
      if (!go_on) return false;
    }
    return true;
  };
  return assign(0);
}

}  // namespace

Result<ExactPipelineResult> exact_pipeline(const StageSource& source, int microbatches, const ExactPipelineOptions& options,
                                           LinkModel links) {
  if (options.max_chunks < 1 || options.max_chunks > 64) return make_error("exact pipeline: max_chunks must be 1 to 64");
  const std::int64_t tasks = std::int64_t{3} * microbatches * source.devices() * options.max_chunks;
  if (tasks > kMaxExactTasks)
    return make_error("exact pipeline: up to " + std::to_string(tasks) + " tasks (3 x microbatches x devices x chunks); "
                      "the branch and bound is for small problems (at most " + std::to_string(kMaxExactTasks) + ")");
  auto base = source.stages(StageLayout{1, false});
  if (!base) return base.error();
  if (base.value().partition.empty())
    return make_error("exact pipeline: the costs have no layers to partition (give a model, not per-stage costs)");
  const int layers = base.value().partition.back().second, devices = source.devices();
  const auto begin = std::chrono::steady_clock::now();
  const auto deadline = begin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(options.time_limit_seconds));
  ExactPipelineResult out;
  out.finished = true;
  double bound = options.upper_bound > 0 ? options.upper_bound * (1 + 1e-9) : kInf;
  std::string error;
  bool recompute_unsearched = false;
  // The best orders of `shape` (its partition, placement and recomputing stages) below the bound;
  // false on an error.
  auto search_orders = [&](const PipelineScheme& shape, bool& memory_cut, bool& can_recompute) {
    auto costs = source.costs_of(shape, "exact pipeline");
    if (!costs) {
      error = costs.error().message;
      return false;
    }
    can_recompute = !costs.value().input_bytes.empty();
    OrderSearch search(shape, costs.value(), links == LinkModel::contention, deadline, options.node_limit);
    std::vector<std::vector<PipeTask>> order;
    const double before = bound;
    if (!search.run(bound, order, out.nodes)) out.finished = false;
    memory_cut = search.memory_cut();
    if (bound < before) {
      out.found = true;
      out.iteration_time = bound;
      out.scheme = shape;
      out.scheme.schedule = std::move(order);
    }
    return true;
  };
  for (int stages = devices; stages <= std::min(layers, devices * options.max_chunks) && out.finished; ++stages)
    for_each_placement(stages, devices, options.max_chunks, [&](const std::vector<int>& placement) {
      return for_each_partition(layers, stages, [&](const Partition& partition) {
        if (!error.empty()) return false;
        if (std::chrono::steady_clock::now() > deadline) {
          out.finished = false;
          return false;
        }
        PipelineScheme shape;
        shape.num_microbatches = microbatches;
        shape.partition = partition;
        shape.placement = placement;
        shape.schedule.resize(devices);
        bool memory_cut = false, can_recompute = false;
        if (!search_orders(shape, memory_cut, can_recompute)) return false;
        // Recomputation only lengthens B, so it can help only where memory cut the search: with
        // the same per-device orders no task starts earlier (a link's transfers come from one
        // device, in its order), and without a cut every order was open to the plain search.
        if (!options.recompute || !memory_cut || !can_recompute) return out.finished;
        if (devices > kMaxRecomputeDevices) {
          recompute_unsearched = true;  // 2^devices sets: the result is the best found, not the optimum
          return out.finished;
        }
        for (std::uint32_t mask = 1; mask < (1u << devices) && out.finished; ++mask) {
          shape.recompute.clear();
          for (int s = 0; s < stages; ++s)
            if (mask >> placement[s] & 1u) shape.recompute.push_back(s);
          if (!search_orders(shape, memory_cut, can_recompute)) return false;
        }
        return out.finished;  // a limit hit inside the search ends the enumeration too
      });
    });
  if (!error.empty()) return make_error(error);
  if (recompute_unsearched) out.finished = false;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return out;
}

}  // namespace gantry
