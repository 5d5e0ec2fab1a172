#include "tuner/pipeline/list_scheduler.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/host_offload.hpp"

namespace gantry {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// What a device would run next, and when.
struct Choice {
  double start = kInf;
  int stage = -1;  // -1: nothing
  PipeOp op = PipeOp::F;
};

// One run of the list scheduler over a scheme's placement. The tuner plans the orders of most of
// its candidates here, so what a choice reads per stage is computed once up front, and each
// device's choice is kept and recomputed only when it can have changed.
class ListScheduler {
 public:
  ListScheduler(const PipelineScheme& scheme, const StageCosts& costs, const ListScheduleRules& rules)
      : costs_(costs), rules_(rules), stages_(scheme.num_stages()), devices_(scheme.num_devices()),
        micro_(scheme.num_microbatches), placement_(scheme.placement) {
    plan_stages();
    clear_progress();
    plan_memory();
  }

  // Every task, in the order the devices start them, appended to `schedule` (one list per device).
  Status run(std::vector<std::vector<PipeTask>>& schedule) {
    const int per_microbatch = rules_.split_backward ? 3 : 2;
    for (int d = 0; d < devices_; ++d)
      schedule[d].reserve(static_cast<std::size_t>(per_microbatch) * (first_[d + 1] - first_[d]) * micro_);
    start_tournament();
    for (int remaining = per_microbatch * stages_ * micro_; remaining > 0; --remaining) {
      int d = tree_[1].device;
      Choice c = choice_[d];
      if (c.start == kInf && rules_.reserve != MemoryReserve::all) {
        // Every device waits for memory (packing rule): the earliest F of a later stage that
        // waits for room runs anyway (the devices' choices stand: only its device's changes), or
        // else the earliest entry F, which a choice with the limits ignored finds.
        d = earliest_waiting();
        if (d >= 0) {
          c = waiting_[d];
        } else {
          ignore_room_ = true;
          start_tournament();
          d = tree_[1].device;
          c = choice_[d];
        }
      }
      if (c.start == kInf) return make_error("list scheduler: stalled with work left (internal error)");
      const PipeTask task = start_task(d, c);
      schedule[d].push_back(task);
      rechoose(d);
      // An F's end readies the next stage's F, a B's end the previous stage's B: another device's
      // choice changes only when that is its stage's next task (no other state is shared).
      const int s = task.stage, m = task.microbatch;
      if (c.op == PipeOp::F && s + 1 < stages_ && placement_[s + 1] != d && next_f_[s + 1] == m)
        rechoose(placement_[s + 1]);
      if ((c.op == PipeOp::B || c.op == PipeOp::BW) && s > 0 && placement_[s - 1] != d && next_b_[s - 1] == m)
        rechoose(placement_[s - 1]);
      if (ignore_room_) {  // one task past the limit; then memory binds again
        ignore_room_ = false;
        start_tournament();
      }
    }
    return Ok{};
  }

 private:
  // Rank among work that can start now (lower first).
  int rank(PipeOp kind) const {
    switch (kind) {
      case PipeOp::W: return rules_.delay_w ? 3 : 0;
      case PipeOp::F: return rules_.f_before_b ? 1 : 2;
      default: return rules_.f_before_b ? 2 : 1;  // B or BW
    }
  }

  std::size_t at(int s, int m) const { return static_cast<std::size_t>(m) * stages_ + s; }  // a microbatch's stages side by side

  // The stages of each device, deepest first, as one list (device d's are first_[d] .. first_[d + 1]),
  // and what a stage's tasks wait for and hold.
  void plan_stages() {
    first_.assign(devices_ + 1, 0);
    for (int s = 0; s < stages_; ++s) ++first_[placement_[s] + 1];
    for (int d = 0; d < devices_; ++d) first_[d + 1] += first_[d];
    stages_of_.resize(stages_);
    std::vector<int> fill(first_.begin(), first_.end() - 1);
    for (int s = stages_ - 1; s >= 0; --s) stages_of_[fill[placement_[s]]++] = s;
    entry_.assign(devices_, stages_);
    for (int s = 0; s < stages_; ++s) entry_[placement_[s]] = std::min(entry_[placement_[s]], s);
    auto comm = [&](int from, int to) {  // free between stages on one device
      return placement_[from] == placement_[to] ? 0.0 : costs_.comm[std::min(from, to)];
    };
    f_wait_.assign(stages_, 0.0);
    b_wait_.assign(stages_, 0.0);
    offloaded_.assign(stages_, 0.0);
    kept_.assign(stages_, 0.0);
    copy_time_.assign(stages_, 0.0);
    for (int s = 0; s < stages_; ++s) {
      if (s > 0) f_wait_[s] = comm(s - 1, s);
      if (s + 1 < stages_) b_wait_[s] = comm(s + 1, s);
      if (!costs_.offload.empty()) offloaded_[s] = costs_.offload[s];
      kept_[s] = costs_.mem_f[s] - offloaded_[s];
      if (offloaded_[s] > 0) copy_time_[s] = host_copy_time(costs_, s);
    }
  }

  // Nothing run yet.
  void clear_progress() {
    f_end_.assign(static_cast<std::size_t>(stages_) * micro_, kInf);
    b_end_ = f_end_;
    next_f_.assign(stages_, 0);
    next_b_.assign(stages_, 0);
    next_w_.assign(stages_, 0);
    free_at_.assign(devices_, 0.0);
    in_flight_.assign(devices_, 0);
    w_pending_.assign(devices_, 0);
  }

  // Offloaded activations (core/host_offload.hpp) stay on the device until their copy out ends
  // (the device's copy engine runs them one at a time in F order: a burst of F outruns it), then
  // count as gone until their B, which they rejoin; the copies back issued ahead of their B hold
  // at most kCopiesBackInFlight stages' offloads at once, reserved on the device from the start.
  // What a microbatch allocates on a device after its entry F (the F of the device's later stages
  // and the gradients of B) is reserved when the entry F is admitted, so that a device's peak
  // stays within its room however the microbatch's later work interleaves with others' (short of
  // MemoryReserve::all, B's gradients stay reserved and later F wait for room). With
  // offload it stays so only approximately: the reservation takes a later F at what stays after
  // its copy out, which a slow host link may not have finished when the next F starts (the
  // evaluator then finds the scheme over its limit and the tuner rejects it).
  void plan_memory() {
    room_.assign(devices_, kInf);
    if (rules_.respect_memory)
      for (int d = 0; d < devices_ && d < static_cast<int>(costs_.max_mem.size()); ++d)
        if (costs_.max_mem[d] > 0) {
          room_[d] = costs_.max_mem[d];
          double transient = 0;  // a recomputing B's rebuilt activations come on top of what is held
          double copied_back = 0;
          for (int i = first_[d]; i < first_[d + 1]; ++i) {
            const int s = stages_of_[i];
            room_[d] -= costs_.static_memory[s];
            if (!costs_.transient_b.empty()) transient = std::max(transient, costs_.transient_b[s]);
            copied_back = std::max(copied_back, offloaded_[s]);
          }
          room_[d] -= transient + kCopiesBackInFlight * copied_back;
        }
    later_.assign(devices_, 0.0);
    later_b_.assign(devices_, 0.0);
    for (int s = 0; s < stages_; ++s) {
      const int d = placement_[s];
      later_[d] += (s != entry_[d] ? kept_[s] : 0.0) + std::max(0.0, costs_.mem_b[s]);
      later_b_[d] += std::max(0.0, costs_.mem_b[s]);
    }
    used_.assign(devices_, 0.0);
    promised_.assign(devices_, 0.0);
    promised_b_.assign(devices_, 0.0);
    unreserved_.assign(devices_, 0.0);
    copying_out_.assign(devices_, 0.0);
    copy_out_free_.assign(devices_, 0.0);
    copies_out_.assign(devices_, {});
    copies_done_.assign(devices_, 0);
    waiting_.assign(devices_, Choice{});
  }

  // Device d's next task: among the work that can start when it is free, the best ranked; else
  // the work that can start soonest.
  Choice choose(int d) {
    Choice c;
    const int* begin = stages_of_.data() + first_[d];
    const int* end = stages_of_.data() + first_[d + 1];
    if (begin == end) return c;  // a device without stages has nothing to run
    const double now = free_at_[d];
    waiting_[d] = Choice{};
    auto consider = [&](PipeOp kind, int s, double ready) {
      const double start = std::max(now, ready);
      // Work that can start now wins by rank; otherwise the earliest start.
      if (start < c.start || (start == c.start && start <= now && rank(kind) < rank(c.op))) {
        c.start = start;
        c.stage = s;
        c.op = kind;
      }
    };
    const bool has_w = rules_.split_backward;
    if (has_w && !rules_.delay_w)
      for (const int* s = begin; s != end; ++s)
        if (next_w_[*s] < next_b_[*s]) consider(PipeOp::W, *s, b_end_[at(*s, next_w_[*s])]);
    const PipeOp backward = has_w ? PipeOp::B : PipeOp::BW;
    for (const int* s = begin; s != end; ++s)
      if (next_b_[*s] < next_f_[*s]) {
        const int m = next_b_[*s];
        consider(backward, *s, *s == stages_ - 1 ? f_end_[at(*s, m)] : b_end_[at(*s + 1, m)] + b_wait_[*s]);
      }
    auto& queue = copies_out_[d];
    for (std::size_t& done = copies_done_[d]; done < queue.size() && queue[done].first <= now; ++done)
      copying_out_[d] -= queue[done].second;
    const int e = entry_[d];  // summed in this order, as the memory rule always was (rounding)
    const double held = used_[d] + copying_out_[d];
    const bool reserve_held = rules_.reserve != MemoryReserve::newcomer;
    const bool reserve_new = rules_.reserve != MemoryReserve::held;
    const double promised = reserve_held ? promised_[d] : promised_b_[d];
    const bool fits = held + promised + costs_.mem_f[e] - offloaded_[e] + (reserve_new ? later_[d] : later_b_[d]) <= room_[d] ||
                      (in_flight_[d] == 0 && w_pending_[d] == 0) || ignore_room_;
    const bool admits = in_flight_[d] < rules_.in_flight_limit[d] && fits;
    for (const int* s = begin; s != end; ++s)
      if (next_f_[*s] < micro_ && (*s != entry_[d] || admits)) {
        const int m = next_f_[*s];
        const double ready = *s == 0 ? 0.0 : f_end_[at(*s - 1, m)] + f_wait_[*s];
        if (*s == entry_[d] || rules_.reserve == MemoryReserve::all) {
          consider(PipeOp::F, *s, ready);
        } else if (const double room_at = when_fits(d, later_f_base(d, m, held), costs_.mem_f[*s]); room_at < kInf) {
          consider(PipeOp::F, *s, std::max(ready, room_at));  // a later F waits for its room (its copy out starts after it)
        } else if (std::max(now, ready) < waiting_[d].start) {  // room only the device's own later work frees
          waiting_[d] = Choice{std::max(now, ready), *s, PipeOp::F};
        }
      }
    if (has_w && rules_.delay_w && c.start > now)
      for (const int* s = begin; s != end; ++s)
        if (next_w_[*s] < next_b_[*s]) consider(PipeOp::W, *s, b_end_[at(*s, next_w_[*s])]);
    return c;
  }

  // What a later F of microbatch m on device d must fit beside, which holds `held` now: B's
  // gradients are always reserved; by the held rule, the newest microbatch's later F also keep
  // clear of the held ones' reservations (its own are the only ones not reserved: each older
  // microbatch's were when the next one entered), so that an older microbatch's later F always
  // has its room (with three stages on a device the newest's second F could take it otherwise).
  double later_f_base(int d, int m, double held) const {
    if (rules_.reserve == MemoryReserve::held && m == next_f_[entry_[d]] - 1)
      return held + promised_[d] - unreserved_[d];
    return held + promised_b_[d];
  }

  // The device whose F of a later stage waits for room and is ready first (-1: none).
  int earliest_waiting() const {
    int best = -1;
    for (int d = 0; d < devices_; ++d)
      if (waiting_[d].stage >= 0 && (best < 0 || waiting_[d].start < waiting_[best].start)) best = d;
    return best;
  }

  // When `bytes` more fit on device d, which holds `held` now (its free time): now, at the end of
  // a copy out under way, or never before its own B or W free some (+inf).
  double when_fits(int d, double held, double bytes) const {
    if (held + bytes <= room_[d]) return free_at_[d];
    const auto& queue = copies_out_[d];
    for (std::size_t i = copies_done_[d]; i < queue.size(); ++i) {
      held -= queue[i].second;
      if (held + bytes <= room_[d]) return queue[i].first;
    }
    return kInf;
  }

  // Device d starts `c`: its ends, memory and counts move on; returns the task.
  PipeTask start_task(int d, const Choice& c) {
    const int s = c.stage;
    PipeTask t{c.op, 0, s};
    double duration = 0;
    switch (c.op) {
      case PipeOp::F:
        t.microbatch = next_f_[s]++;
        duration = costs_.f[s];
        f_end_[at(s, t.microbatch)] = c.start + duration;
        used_[d] += kept_[s];
        promised_[d] += s == entry_[d] ? later_[d] : -kept_[s];
        if (s == entry_[d]) {
          promised_b_[d] += later_b_[d];
          unreserved_[d] = later_[d] - later_b_[d];  // its later F's activations
        } else if (t.microbatch == next_f_[entry_[d]] - 1) {
          unreserved_[d] -= kept_[s];
        }
        if (offloaded_[s] > 0) {
          copy_out_free_[d] = std::max(copy_out_free_[d], c.start + duration) + copy_time_[s];
          copies_out_[d].emplace_back(copy_out_free_[d], offloaded_[s]);
          copying_out_[d] += offloaded_[s];
        }
        ++in_flight_[d];
        break;
      case PipeOp::B:
        t.microbatch = next_b_[s]++;
        duration = costs_.b[s];
        b_end_[at(s, t.microbatch)] = c.start + duration;
        used_[d] += offloaded_[s] + costs_.mem_b[s];
        promised_[d] -= std::max(0.0, costs_.mem_b[s]);
        promised_b_[d] -= std::max(0.0, costs_.mem_b[s]);
        --in_flight_[d];
        ++w_pending_[d];
        break;
      case PipeOp::BW:
        t.microbatch = next_b_[s]++;
        duration = costs_.b[s] + costs_.w[s];
        b_end_[at(s, t.microbatch)] = c.start + duration;
        used_[d] += offloaded_[s] + costs_.mem_b[s] + costs_.mem_w[s];
        promised_[d] -= std::max(0.0, costs_.mem_b[s]);
        promised_b_[d] -= std::max(0.0, costs_.mem_b[s]);
        --in_flight_[d];
        break;
      case PipeOp::W:
        t.microbatch = next_w_[s]++;
        duration = costs_.w[s];
        used_[d] += costs_.mem_w[s];
        --w_pending_[d];
        break;
    }
    free_at_[d] = c.start + duration;
    return t;
  }

  // The device whose choice starts first (the lowest-numbered among equals), kept in a tournament
  // tree over the devices: a changed choice replays its path to the root, log2(devices) matches
  // instead of a scan of every device per task. Nodes hold their winner's start (+inf: no choice)
  // so that a match reads no further.
  struct Entrant {
    double start = kInf;
    int device = -1;
  };
  static const Entrant& earlier(const Entrant& left, const Entrant& right) {  // left wins ties: lower numbers
    return right.start < left.start ? right : left;
  }

  void start_tournament() {
    leaves_ = 1;
    while (leaves_ < devices_) leaves_ *= 2;
    tree_.assign(2 * static_cast<std::size_t>(leaves_), Entrant{});
    choice_.resize(devices_);
    for (int d = 0; d < devices_; ++d) {
      choice_[d] = choose(d);
      tree_[leaves_ + d] = Entrant{choice_[d].stage < 0 ? kInf : choice_[d].start, d};
    }
    for (int node = leaves_ - 1; node >= 1; --node) tree_[node] = earlier(tree_[2 * node], tree_[2 * node + 1]);
  }

  void rechoose(int d) {
    choice_[d] = choose(d);
    int node = leaves_ + d;
    const double start = choice_[d].stage < 0 ? kInf : choice_[d].start;
    if (tree_[node].start == start) return;  // every match on its path ends as before
    tree_[node].start = start;
    for (node /= 2; node >= 1; node /= 2) tree_[node] = earlier(tree_[2 * node], tree_[2 * node + 1]);
  }

  const StageCosts& costs_;
  const ListScheduleRules& rules_;
  const int stages_, devices_, micro_;
  const std::vector<int>& placement_;
  // Per stage: what its F waits for after the previous stage's F (the transfer; none on one
  // device), what its B waits for after the next stage's B, bytes offloaded and kept per F, the
  // copy out's time.
  std::vector<double> f_wait_, b_wait_, offloaded_, kept_, copy_time_;
  std::vector<int> first_, stages_of_, entry_;  // entry_: each device's first stage
  std::vector<double> f_end_, b_end_;           // per (stage, microbatch)
  std::vector<int> next_f_, next_b_, next_w_;   // per stage: the next microbatch of each kind
  std::vector<double> free_at_;
  std::vector<int> in_flight_, w_pending_;  // activations between F and B; B without W
  // Per device: memory for activations, held, promised to admitted microbatches' later work, and
  // on the way out; what the held microbatches' B will still allocate (and what one microbatch's
  // B allocate there), which the packing rules reserve instead of the promise.
  std::vector<double> room_, used_, promised_, later_, copying_out_, copy_out_free_, promised_b_, later_b_;
  std::vector<double> unreserved_;  // per device: the newest microbatch's later F still to run (held rule)
  std::vector<std::vector<std::pair<double, double>>> copies_out_;  // (end, bytes) in order
  std::vector<std::size_t> copies_done_;                              // of copies_out_, the ended ones
  std::vector<Choice> choice_;
  std::vector<Choice> waiting_;  // per device, by the packing rule: its first F of a later stage waiting for room
  bool ignore_room_ = false;     // every device waited for memory, and no later F: an entry F runs regardless
  int leaves_ = 1;
  std::vector<Entrant> tree_;  // node 1 the root, device d's leaf at leaves_ + d
};

}  // namespace

const char* to_string(MemoryReserve reserve) {
  switch (reserve) {
    case MemoryReserve::newcomer: return "newcomer";
    case MemoryReserve::held: return "held";
    default: return "all";
  }
}

std::optional<MemoryReserve> memory_reserve_from(const std::string& name) {
  for (MemoryReserve r : {MemoryReserve::all, MemoryReserve::newcomer, MemoryReserve::held})
    if (name == to_string(r)) return r;
  return std::nullopt;
}

Result<PipelineScheme> pipeline_list_schedule(PipelineScheme scheme, const StageCosts& costs, const ListScheduleRules& rules) {
  const int stages = scheme.num_stages(), devices = scheme.num_devices();
  if (costs.num_stages() != stages)
    return make_error("list scheduler: the costs give " + std::to_string(costs.num_stages()) + " stages, the placement " +
                      std::to_string(stages));
  if (static_cast<int>(rules.in_flight_limit.size()) != devices)
    return make_error("list scheduler: " + std::to_string(rules.in_flight_limit.size()) + " in-flight limits for " +
                      std::to_string(devices) + " devices");
  for (int d = 0; d < devices; ++d)
    if (rules.in_flight_limit[d] < 1)
      return make_error("list scheduler: device " + std::to_string(d) + "'s in-flight limit must be at least 1");
  for (auto& list : scheme.schedule) list.clear();
  ListScheduler scheduler(scheme, costs, rules);
  auto ran = scheduler.run(scheme.schedule);
  if (!ran) return ran.error();
  return scheme;
}

}  // namespace gantry
