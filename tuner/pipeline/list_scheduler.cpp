#include "tuner/pipeline/list_scheduler.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <utility>

#include "core/host_offload.hpp"

namespace gantry {

namespace {

// Rank among work that can start now (lower first).
int rank(PipeOp kind, const ListScheduleRules& rules) {
  switch (kind) {
    case PipeOp::W: return rules.delay_w ? 3 : 0;
    case PipeOp::F: return rules.f_before_b ? 1 : 2;
    default: return rules.f_before_b ? 2 : 1;  // B or BW
  }
}

}  // namespace

Result<PipelineScheme> pipeline_list_schedule(PipelineScheme scheme, const StageCosts& costs, const ListScheduleRules& rules) {
  const int stages = scheme.num_stages(), devices = scheme.num_devices(), micro = scheme.num_microbatches;
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
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<int>> stages_of(devices);  // deepest first
  for (int s = stages - 1; s >= 0; --s) stages_of[scheme.placement[s]].push_back(s);
  std::vector<int> entry(devices, stages);  // the first stage of each device
  for (int s = 0; s < stages; ++s) entry[scheme.placement[s]] = std::min(entry[scheme.placement[s]], s);
  auto at = [&](int s, int m) { return static_cast<std::size_t>(s) * micro + m; };
  std::vector<double> f_end(static_cast<std::size_t>(stages) * micro, inf), b_end = f_end;
  std::vector<int> next_f(stages, 0), next_b(stages, 0), next_w(stages, 0);
  std::vector<double> free_at(devices, 0.0), room(devices, inf), used(devices, 0.0);
  std::vector<int> in_flight(devices, 0), w_pending(devices, 0);  // activations between F and B; B without W
  // Offloaded activations (core/host_offload.hpp) stay on the device until their copy out ends
  // (the device's copy engine runs them one at a time in F order: a burst of F outruns it), then
  // count as gone until their B, which they rejoin; the copies back issued ahead of their B hold
  // at most kCopiesBackInFlight stages' offloads at once, reserved on the device from the start.
  auto offloaded = [&](int s) { return costs.offload.empty() ? 0.0 : costs.offload[s]; };
  std::vector<double> copy_out_free(devices, 0.0), copying_out(devices, 0.0);
  std::vector<std::deque<std::pair<double, double>>> copies_out(devices);  // (end, bytes) in order
  if (rules.respect_memory)
    for (int d = 0; d < devices && d < static_cast<int>(costs.max_mem.size()); ++d)
      if (costs.max_mem[d] > 0) {
        room[d] = costs.max_mem[d];
        double transient = 0;  // a recomputing B's rebuilt activations come on top of what is held
        double copied_back = 0;
        for (int s : stages_of[d]) {
          room[d] -= costs.static_memory[s];
          if (!costs.transient_b.empty()) transient = std::max(transient, costs.transient_b[s]);
          copied_back = std::max(copied_back, offloaded(s));
        }
        room[d] -= transient + kCopiesBackInFlight * copied_back;
      }
  // What a microbatch allocates on a device after its entry F (the F of the device's later stages
  // and the gradients of B), reserved when the entry F is admitted, so that a device's peak stays
  // within its room however the microbatch's later work interleaves with others'. With offload
  // it stays so only approximately: the reservation takes a later F at what stays after its copy
  // out, which a slow host link may not have finished when the next F starts (the evaluator then
  // finds the scheme over its limit and the tuner rejects it).
  std::vector<double> later(devices, 0.0), promised(devices, 0.0);
  for (int s = 0; s < stages; ++s) {
    const int d = scheme.placement[s];
    later[d] += (s != entry[d] ? costs.mem_f[s] - offloaded(s) : 0.0) + std::max(0.0, costs.mem_b[s]);
  }
  auto comm = [&](int from, int to) {  // free between stages on one device
    return scheme.placement[from] == scheme.placement[to] ? 0.0 : costs.comm[std::min(from, to)];
  };
  const PipeOp backward = rules.split_backward ? PipeOp::B : PipeOp::BW;
  const int per_microbatch = rules.split_backward ? 3 : 2;
  for (int d = 0; d < devices; ++d)
    scheme.schedule[d].reserve(static_cast<std::size_t>(per_microbatch) * stages_of[d].size() * micro);
  // Each device's choice (what it would run next, and when) depends only on its own state and on
  // the ends of the F before and the B after its stages. It is kept, and recomputed only when the
  // device runs a task or a neighbouring stage's F or B ends on another device: the same schedule
  // as asking every device at every step, for a fraction of the work (most of the tuner's time
  // went there).
  struct Choice {
    double start = std::numeric_limits<double>::infinity();
    int stage = -1;
    PipeOp op = PipeOp::F;
  };
  auto choose = [&](int d) {
    Choice c;
    if (stages_of[d].empty()) return c;  // a device without stages has nothing to run
    const double now = free_at[d];
    auto consider = [&](PipeOp kind, int s, double ready) {
      const double begin = std::max(now, ready);
      // Work that can start now wins by rank; otherwise the earliest start.
      if (begin < c.start || (begin == c.start && begin <= now && rank(kind, rules) < rank(c.op, rules))) {
        c.start = begin;
        c.stage = s;
        c.op = kind;
      }
    };
    const bool has_w = rules.split_backward;
    if (has_w && !rules.delay_w)
      for (int s : stages_of[d])
        if (next_w[s] < next_b[s]) consider(PipeOp::W, s, b_end[at(s, next_w[s])]);
    for (int s : stages_of[d])
      if (next_b[s] < next_f[s]) {
        const int m = next_b[s];
        consider(backward, s, s == stages - 1 ? f_end[at(s, m)] : b_end[at(s + 1, m)] + comm(s + 1, s));
      }
    for (auto& queue = copies_out[d]; !queue.empty() && queue.front().first <= now; queue.pop_front())
      copying_out[d] -= queue.front().second;
    const bool fits = used[d] + copying_out[d] + promised[d] + costs.mem_f[entry[d]] - offloaded(entry[d]) + later[d] <= room[d] ||
                      (in_flight[d] == 0 && w_pending[d] == 0);
    for (int s : stages_of[d])
      if (next_f[s] < micro && (s != entry[d] || (in_flight[d] < rules.in_flight_limit[d] && fits))) {
        const int m = next_f[s];
        consider(PipeOp::F, s, s == 0 ? 0.0 : f_end[at(s - 1, m)] + comm(s - 1, s));
      }
    if (has_w && rules.delay_w && c.start > now)
      for (int s : stages_of[d])
        if (next_w[s] < next_b[s]) consider(PipeOp::W, s, b_end[at(s, next_w[s])]);
    return c;
  };
  std::vector<Choice> choice(devices);
  for (int d = 0; d < devices; ++d) choice[d] = choose(d);
  for (int remaining = per_microbatch * stages * micro; remaining > 0; --remaining) {
    int best_device = -1;
    double best_start = inf;
    for (int d = 0; d < devices; ++d)
      if (choice[d].stage >= 0 && choice[d].start < best_start) {
        best_start = choice[d].start;
        best_device = d;
      }
    if (best_device < 0) return make_error("list scheduler: stalled with work left (internal error)");
    const int d = best_device, s = choice[d].stage;
    const PipeOp best_op = choice[d].op;
    PipeTask t{best_op, 0, s};
    double duration = 0;
    switch (best_op) {
      case PipeOp::F:
        t.microbatch = next_f[s]++;
        duration = costs.f[s];
        f_end[at(s, t.microbatch)] = best_start + duration;
        used[d] += costs.mem_f[s] - offloaded(s);
        promised[d] += s == entry[d] ? later[d] : -(costs.mem_f[s] - offloaded(s));
        if (offloaded(s) > 0) {
          copy_out_free[d] = std::max(copy_out_free[d], best_start + duration) + host_copy_time(costs, s);
          copies_out[d].emplace_back(copy_out_free[d], offloaded(s));
          copying_out[d] += offloaded(s);
        }
        ++in_flight[d];
        break;
      case PipeOp::B:
        t.microbatch = next_b[s]++;
        duration = costs.b[s];
        b_end[at(s, t.microbatch)] = best_start + duration;
        used[d] += offloaded(s) + costs.mem_b[s];
        promised[d] -= std::max(0.0, costs.mem_b[s]);
        --in_flight[d];
        ++w_pending[d];
        break;
      case PipeOp::BW:
        t.microbatch = next_b[s]++;
        duration = costs.b[s] + costs.w[s];
        b_end[at(s, t.microbatch)] = best_start + duration;
        used[d] += offloaded(s) + costs.mem_b[s] + costs.mem_w[s];
        promised[d] -= std::max(0.0, costs.mem_b[s]);
        --in_flight[d];
        break;
      case PipeOp::W:
        t.microbatch = next_w[s]++;
        duration = costs.w[s];
        used[d] += costs.mem_w[s];
        --w_pending[d];
        break;
    }
    free_at[d] = best_start + duration;
    scheme.schedule[d].push_back(t);
    // An F's end readies the next stage's F; a B's end readies the previous stage's B.
    choice[d] = choose(d);
    if (best_op == PipeOp::F && s + 1 < stages && scheme.placement[s + 1] != d)
      choice[scheme.placement[s + 1]] = choose(scheme.placement[s + 1]);
    if (best_op != PipeOp::F && best_op != PipeOp::W && s > 0 && scheme.placement[s - 1] != d)
      choice[scheme.placement[s - 1]] = choose(scheme.placement[s - 1]);
  }
  return scheme;
}

}  // namespace gantry
