#include "tuner/pipeline/pipeline_tuner.hpp"

#include "tuner/pipeline/pipeline_random_search.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <iterator>
#include <limits>
#include <numeric>
#include <random>
#include <set>

namespace gantry {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxShiftChain = 3;          // stages a partition move carries a layer across
constexpr int kMaxOrderSteps = 50;          // task moves kept per order phase
constexpr std::size_t kAllMovesTasks = 128;  // up to this many tasks, order steps try every reinsertion (their orders travel to workers: ~4000 candidates at most)
constexpr std::size_t kGapsPerOrderStep = 16;  // the largest bubbles a step tries to fill
constexpr int kTasksPulledIntoGap = 8;         // candidates per bubble: the next tasks of its device
constexpr int kMaxRefusedKicks = 100;          // kicks in a row the evaluator refuses end the kick phase
// A layout's offloading start (Tuner::offloading_start): three quarters of the activations of its
// first half of stages; copies back issued 8 tasks ahead of their B. From the V layout of
// jamba-v0.1 on 8xH200 (p=8, m=32; 3.782 s without offload): 0.5 ran 3.171 s, 0.75 3.064 s and 1
// out of memory at depth 12 (the host links carry about as much as the devices compute then);
// 8 tasks ahead beat 1, 2 and 4.
constexpr double kStartOffload = 0.75;
constexpr int kStartReloadAhead = 8;
constexpr double kOffloadStep = 0.125;  // the finest change of an offload fraction the tuner makes

// A problem small enough for what costs too much on larger ones (every task reinsertion, every
// layout's order descent, the held memory reserve): at most kAllMovesTasks tasks, F, B and W (or F
// and a fused BW) per stage and microbatch.
bool small_problem(const PipelineCandidate& c, int microbatches) {
  return c.placement.size() * static_cast<std::size_t>(microbatches) * (c.rules.split_backward ? 3 : 2) <= kAllMovesTasks;
}

class Tuner {
 public:
  Tuner(CandidateEvaluator& evaluator, const PipelineTuneOptions& options)
      : evaluator_(evaluator), options_(options), begin_(std::chrono::steady_clock::now()) {}

  Status start(const std::vector<PipelineCandidate>& starts) {
    if (starts.empty()) return make_error("pipeline tuner: no starting scheme");
    for (const PipelineCandidate& c : starts) {
      auto r = evaluator_.evaluate(c);
      if (!r) return r.error();
      if (result_.start.placement.empty() || r.value().better_than(result_.start_result)) {
        result_.start = c;
        result_.start_result = r.value();
      }
    }
    result_.best = result_.start;
    result_.best_result = result_.start_result;
    report("start", 0);
    return Ok{};
  }

  PipelineTuneResult run() {
    for (int pass = 1; pass <= options_.max_passes && !out_of_budget(); ++pass) {
      const double before = best_time();
      descents(pass, /*try_layouts=*/pass == 1);
      result_.passes = pass;
      const double after = best_time();
      if (!(after < before) || (before < kInf && (before - after) / before < options_.min_gain)) break;
    }
    const std::int64_t walk_length = planned_walk();
    std::future<Result<PipelineSearchResult>> walking;
    if (walk_length > 1 && walk_alongside()) walking = std::async(std::launch::async, [this, walk_length] { return walk_alone(walk_length); });
    try {
      kick_phase();
    } catch (...) {  // the walk would otherwise run its whole length before the error leaves
      abandon_walk_ = true;
      throw;
    }
    if (walking.valid()) {
      abandon_walk_ = !result_.failure.empty();  // an ended tuning leaves the walk too
      in_phase("anneal", result_.passes);
      while (walking.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) report_running();
      auto walked = walking.get();
      if (walked) elsewhere_ += walked.value().evaluations;
      anneal_phase(walked);
    } else if (walk_length > 1 && !out_of_budget()) {
      in_phase("anneal", result_.passes);
      anneal_phase(walk(evaluator_, std::min(walk_length, evaluations_left()), [&] {  // polled between the walk's evaluations
        report_running();
        return out_of_budget();
      }));
    }
    result_.evaluations = evaluations();
    result_.stopped = stopped();
    result_.budget_ended = !result_.stopped && out_of_budget();
    return std::move(result_);
  }

 private:
  double best_time() const { return result_.best_result.iteration_time; }

  // The walk's evaluations: options_.anneal_share of the descents' and the kicks' (planned as
  // the kick share of the descents', so that the walk is the same whether it runs after the
  // kicks or beside them); 0: none.
  std::int64_t planned_walk() const {
    if (options_.anneal_share <= 0) return 0;
    const double kicks = options_.kick_share > 0 ? options_.kick_share : 0;
    return std::max<std::int64_t>(100, static_cast<std::int64_t>(options_.anneal_share * (1 + kicks) * evaluations()));
  }

  // The walk is independent of the kicks (it starts from the best start), so it runs beside them
  // on a thread of its own unless an evaluation budget would be shared (then what each finds
  // would depend on the other). Under a time budget the two share the clock instead: the walk
  // gets time it would not have had after the kicks. A stop or failure during the kicks ends
  // the walk too, and its best so far is kept like the kicks'. The kicks' steps mostly wait for
  // the rollout pool, whose workers are often other machines; on nemotron-h-47b at p=16 on
  // 2 cores the serial walk took 40 s of 165-190.
  bool walk_alongside() const { return options_.max_evaluations <= 0 && options_.kick_share > 0 && !out_of_budget(); }

  std::int64_t evaluations_left() const {
    return options_.max_evaluations > 0 ? options_.max_evaluations - evaluations() : std::numeric_limits<std::int64_t>::max();
  }

  // An annealing walk from the best start with `evaluator`, `length` evaluations at most.
  Result<PipelineSearchResult> walk(CandidateEvaluator& evaluator, std::int64_t length, const std::function<bool()>& should_stop) const {
    return anneal(evaluator, result_.start, length, options_.max_chunks, options_.seed, should_stop, AnnealMoves::within_layout);
  }

  // The walk on its own evaluator, beside the kicks: it reads only the start, the options and the
  // clock (no progress reports: those are the kicks').
  // Its count is its evaluator's, as the tuner's own evaluator would have counted it (a
  // neighbour the evaluator refuses is not an evaluation).
  Result<PipelineSearchResult> walk_alone(std::int64_t length) const {
    CandidateEvaluator own(evaluator_.source(), evaluator_.microbatches(), evaluator_.links());
    auto walked = walk(own, length, [this] {
      return abandon_walk_.load() || stopped() || out_of_time();  // out_of_budget() reads the kicks' counts
    });
    if (walked) walked.value().evaluations = own.evaluations();
    return walked;
  }

  // The walk's end: when it found better than the descents and kicks, one more pass of the
  // descents from there.
  void anneal_phase(const Result<PipelineSearchResult>& walked) {
    if (walked && walked.value().best_result.better_than(result_.best_result)) {
      result_.best = walked.value().best;
      result_.best_result = walked.value().best_result;
      report("anneal", result_.passes);
      descents(++result_.passes, /*try_layouts=*/false);
    } else {
      report("anneal", result_.passes);
    }
  }

  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }

  bool stopped() const { return options_.should_stop && options_.should_stop(); }

  std::int64_t evaluations() const { return evaluator_.evaluations() + elsewhere_; }

  bool out_of_time() const { return options_.budget_seconds > 0 && seconds() >= options_.budget_seconds; }

  bool out_of_budget() const {
    return out_of_time() ||
           (options_.max_evaluations > 0 && evaluations() >= options_.max_evaluations) || stopped() ||
           !result_.failure.empty();
  }

  // One pass of the four descents, each reported when it ends.
  void descents(int pass, bool try_layouts) {
    in_phase("partition", pass);
    partition_phase();
    report("partition", pass);
    in_phase("placement", pass);
    placement_phase(try_layouts);
    report("placement", pass);
    in_phase("schedule", pass);
    schedule_phase();
    report("schedule", pass);
    in_phase("order", pass);
    order_phase();
    report("order", pass);
  }

  PipelineTuneProgress progress(const char* phase, int pass) const {
    PipelineTuneProgress p;
    p.phase = phase;
    p.pass = pass;
    p.iteration_time = result_.best_result.evaluation.iteration_time;
    p.bubble_ratio = result_.best_result.evaluation.bubble_ratio;
    for (double m : result_.best_result.evaluation.peak_memory) p.peak_memory = std::max(p.peak_memory, m);
    p.evaluations = evaluations();
    p.seconds = seconds();
    return p;
  }

  // A phase's end: in the history and to options_.on_progress.
  void report(const char* phase, int pass) {
    const PipelineTuneProgress p = progress(phase, pass);
    result_.history.push_back(p);
    last_report_ = p.seconds;
    if (options_.on_progress) options_.on_progress(p);
  }

  // The phase under way, for report_running().
  void in_phase(const char* phase, int pass) {
    phase_ = phase;
    pass_ = pass;
  }

  // Within a phase, at the first descent step or walk evaluation after options_.progress_seconds
  // since the last report: the best kept so far (a phase's own candidates join it at the phase's
  // end) and the evaluations, so that a long phase shows it is alive.
  void report_running() {
    if (!options_.on_progress || seconds() - last_report_ < options_.progress_seconds) return;
    PipelineTuneProgress p = progress(phase_, pass_);
    p.running = true;
    last_report_ = p.seconds;
    options_.on_progress(p);
  }

  // The moves' results through options_.evaluate_moves, as many as the evaluation budget allows.
  std::vector<std::optional<CandidateResult>> evaluate_elsewhere(const std::vector<PipelineCandidate>& moves) {
    std::vector<PipelineCandidate> asked = moves;
    asked.resize(within_budget(asked.size()));
    if (asked.empty()) return {};
    auto results = options_.evaluate_moves(asked);
    if (!results) {
      if (!stopped()) result_.failure = results.error().message;  // a stop request is not a failure
      return {};
    }
    for (const auto& r : results.value()) elsewhere_ += r ? 1 : 0;
    return std::move(results).value();
  }

  // How many of `moves` moves the evaluation budget still allows.
  std::size_t within_budget(std::size_t moves) const {
    if (options_.max_evaluations <= 0) return moves;
    return std::min<std::size_t>(moves, static_cast<std::size_t>(std::max<std::int64_t>(0, options_.max_evaluations - evaluations())));
  }

  // Whether the moves the budget allows have enough tasks to simulate to pay for the pool's round trip.
  bool worth_sending(const std::vector<PipelineCandidate>& moves) const {
    std::size_t tasks = 0;
    const std::size_t allowed = within_budget(moves.size());
    for (std::size_t i = 0; i < allowed; ++i)
      tasks += 3 * moves[i].placement.size() * static_cast<std::size_t>(evaluator_.microbatches());
    return tasks >= options_.min_tasks_elsewhere;
  }

  // The best of `moves` from `base`, or false when none is better (CandidateResult::better_than).
  bool best_of(const std::vector<PipelineCandidate>& moves, PipelineCandidate& base, CandidateResult& base_result) {
    report_running();
    int chosen = -1;
    CandidateResult chosen_result = base_result;
    const auto consider = [&](std::size_t i, const CandidateResult& r) {
      if (!r.better_than(chosen_result)) return;
      chosen = static_cast<int>(i);
      chosen_result = r;
    };
    if (options_.evaluate_moves && worth_sending(moves)) {
      const auto results = evaluate_elsewhere(moves);
      for (std::size_t i = 0; i < results.size(); ++i)
        if (results[i]) consider(i, *results[i]);  // malformed moves are skipped
    } else {
      for (std::size_t i = 0; i < moves.size() && !out_of_budget(); ++i) {
        auto r = evaluator_.evaluate(moves[i]);
        if (r) consider(i, r.value());  // malformed moves are skipped
      }
    }
    if (chosen < 0) return false;
    base = moves[chosen];
    base_result = chosen_result;
    return true;
  }

  // Steepest descent with `moves_of` until no move helps; returns whether `base` improved.
  template <typename Moves>
  bool descend(PipelineCandidate& base, CandidateResult& base_result, Moves moves_of, int max_steps = 1 << 30) {
    bool improved = false;
    for (int step = 0; step < max_steps && !out_of_budget() && best_of(moves_of(base), base, base_result); ++step)
      improved = true;
    return improved;
  }

  // F+B+W of every stage on its device.
  std::vector<double> stage_loads(const PipelineCandidate& c) const {
    std::vector<double> load;
    auto computed = evaluator_.costs(c);
    if (!computed) return load;
    const StageCosts& costs = computed.value();
    for (int s = 0; s < costs.num_stages(); ++s) load.push_back(costs.f[s] + costs.b[s] + costs.w[s]);
    return load;
  }

  // Shift each boundary by one layer either way, the boundaries next to the most loaded stages
  // first; with `max_span` > 1 also chains of up to that many boundaries.
  std::vector<PipelineCandidate> partition_moves(const PipelineCandidate& c, int max_span) const {
    std::vector<PipelineCandidate> moves;
    const std::vector<double> load = stage_loads(c);
    const int stages = static_cast<int>(c.partition.size());
    if (static_cast<int>(load.size()) != stages) return moves;
    std::vector<int> boundary(std::max(0, stages - 1));
    std::iota(boundary.begin(), boundary.end(), 0);
    std::stable_sort(boundary.begin(), boundary.end(), [&](int a, int b) {
      return std::max(load[a], load[a + 1]) > std::max(load[b], load[b + 1]);
    });
    // Chains carry a layer's worth of load past the stages between (each hands its last layer
    // on), which single shifts reach only through intermediate steps that are often slower.
    for (int span = 1; span <= max_span; ++span)
      for (int k : boundary)
        for (int direction : {-1, 1}) {
          PipelineCandidate m = c;
          if (shift_boundaries(m.partition, k, span, direction)) moves.push_back(std::move(m));
        }
    return moves;
  }

  // Single shifts until none helps, then chains from there (so chains only ever continue what
  // single shifts reach). Returns whether `base` improved.
  bool descend_partition(PipelineCandidate& base, CandidateResult& base_result) {
    if (base.partition.empty()) return false;
    const bool single = descend(base, base_result, [&](const PipelineCandidate& c) { return partition_moves(c, 1); });
    const bool chains =
        descend(base, base_result, [&](const PipelineCandidate& c) { return partition_moves(c, kMaxShiftChain); });
    return single || chains;
  }

  void partition_phase() { descend_partition(result_.best, result_.best_result); }

  // Swap every pair of devices (all their stages), and the devices of neighbouring stages.
  std::vector<PipelineCandidate> device_moves(const PipelineCandidate& c) const {
    std::vector<PipelineCandidate> moves;
    const int devices = evaluator_.source().devices(), stages = static_cast<int>(c.placement.size());
    for (int a = 0; a < devices; ++a)
      for (int b = a + 1; b < devices; ++b) {
        PipelineCandidate m = c;
        m.order.clear();  // orders belong to a placement
        for (int& d : m.placement) d = d == a ? b : d == b ? a : d;
        std::swap(m.rules.in_flight_limit[a], m.rules.in_flight_limit[b]);
        moves.push_back(std::move(m));
      }
    for (int k = 0; k + 1 < stages; ++k)
      if (c.placement[k] != c.placement[k + 1]) {
        moves.push_back(c);
        std::swap(moves.back().placement[k], moves.back().placement[k + 1]);
      }
    if (!c.partition.empty()) append_stage_count_moves(c, moves);
    for (PipelineCandidate& m : moves) m.order.clear();  // orders belong to a placement
    return moves;
  }

  // Recomputing stages after stage k is split in two (+1: both halves recompute when it did) or
  // merged with stage k + 1 (-1: the merged stage recomputes when either did).
  static std::vector<int> renumber_recompute(const std::vector<int>& stages, int k, int change) {
    std::set<int> out;
    for (int s : stages) {
      if (s < k) out.insert(s);
      else if (s == k) out.insert(change > 0 ? std::initializer_list<int>{k, k + 1} : std::initializer_list<int>{k});
      else if (change > 0) out.insert(s + 1);
      else out.insert(s == k + 1 ? k : s - 1);
    }
    return {out.begin(), out.end()};
  }

  // Stage k split at layer `middle` (inside it), its second half on `device`; recomputation
  // follows the stages.
  static void split_stage(PipelineCandidate& c, int k, int middle, int device) {
    const int end = c.partition[k].second;
    c.partition[k].second = middle;
    c.partition.insert(c.partition.begin() + k + 1, {middle, end});
    c.placement.insert(c.placement.begin() + k + 1, device);
    c.recompute = renumber_recompute(c.recompute, k, +1);
    if (!c.offload.empty()) c.offload.insert(c.offload.begin() + k + 1, c.offload[k]);  // both halves offload as it did
  }

  // Stages k and k + 1 merged into one on stage k's device.
  static void merge_stages(PipelineCandidate& c, int k) {
    c.partition[k].second = c.partition[k + 1].second;
    c.partition.erase(c.partition.begin() + k + 1);
    c.placement.erase(c.placement.begin() + k + 1);
    c.recompute = renumber_recompute(c.recompute, k, -1);
    if (!c.offload.empty()) {  // the merged stage offloads as the more offloading one did
      c.offload[k] = std::max(c.offload[k], c.offload[k + 1]);
      c.offload.erase(c.offload.begin() + k + 1);
    }
  }

  // Stage counts that are not a multiple of the devices: split one of the most loaded stages in
  // two (its second half on any device with room for another stage), or merge two neighbouring
  // stages of one device.
  void append_stage_count_moves(const PipelineCandidate& c, std::vector<PipelineCandidate>& moves) const {
    const int devices = evaluator_.source().devices(), stages = static_cast<int>(c.placement.size());
    const std::vector<int> per_device = stages_per_device(c, devices);
    const std::vector<double> load = stage_loads(c);
    if (static_cast<int>(load.size()) != stages) return;
    std::vector<int> heaviest(stages);
    std::iota(heaviest.begin(), heaviest.end(), 0);
    std::stable_sort(heaviest.begin(), heaviest.end(), [&](int a, int b) { return load[a] > load[b]; });
    heaviest.resize(std::min(stages, 3));
    for (int k : heaviest) {
      const auto [first, end] = c.partition[k];
      if (end - first < 2) continue;
      for (int d = 0; d < devices; ++d) {
        if (per_device[d] >= options_.max_chunks) continue;
        moves.push_back(c);
        split_stage(moves.back(), k, first + (end - first) / 2, d);
      }
    }
    for (int k = 0; k + 1 < stages; ++k)
      if (c.placement[k] == c.placement[k + 1]) {
        moves.push_back(c);
        merge_stages(moves.back(), k);
      }
  }

  // A layout is tried as a whole: its balanced partition, then its own partition and schedule
  // descents, kept when the result beats the best. Layouts start from scratch (their own balanced
  // partition and default rules), so they are tried in the first pass only: a later pass would
  // find the same.
  void placement_phase(bool try_layouts) {
    const int devices = evaluator_.source().devices();
    for (int chunks = 1; try_layouts && chunks <= options_.max_chunks && !out_of_budget(); ++chunks)
      for (bool v_shape : {false, true}) {
        if (v_shape && chunks != 2) continue;
        const StageLayout layout{chunks, v_shape};
        if (stage_placement(devices, layout) == result_.best.placement) continue;
        auto start = layout_candidate(evaluator_.source(), layout);
        if (!start) continue;  // e.g. fewer layers than stages
        // Balanced starts, by single shifts and by chains of any length: the descents from them
        // end in different places, and neither is better on every model. A third balances each
        // device's work plus its start delay (the first microbatch's F before its entry stage),
        // so that the device that must carry the most whole layers is one that starts early;
        // it is descended from only when it starts faster than the other two, since memory-bound
        // models want the reverse (their first devices hold the most microbatches).
        const PipelineCandidate by_single = balance_device_loads(evaluator_, start.value(), 1);
        const PipelineCandidate by_chains = balance_device_loads(evaluator_, start.value(), devices * options_.max_chunks);
        const PipelineCandidate by_delays =
            balance_device_loads(evaluator_, start.value(), devices * options_.max_chunks, /*start_delays=*/true);
        const std::optional<PipelineCandidate> offloading = offloading_start(by_single);
        std::optional<CandidateResult> balanced_best;  // of the two balanced starts, unsettled
        for (const PipelineCandidate* from : {&by_single, &by_chains, &by_delays, offloading ? &*offloading : nullptr}) {
          if (!from || (from == &by_chains && by_chains == by_single)) continue;
          if (from == &by_delays && (by_delays == by_single || by_delays == by_chains)) continue;
          if (out_of_budget()) break;
          PipelineCandidate c = *from;
          auto r = evaluator_.evaluate(c);
          if (!r) continue;
          CandidateResult cr = r.value();
          if (from == &by_single || from == &by_chains) {
            if (!balanced_best || cr.better_than(*balanced_best)) balanced_best = cr;
          } else if (from == &by_delays && balanced_best && !cr.better_than(*balanced_best)) {
            continue;
          }
          settle(c, cr, /*kicked=*/false);
          kick_bases_.push_back({c, cr});
          if (small_and_memory_bound(c)) order_descent(c, cr, kMaxOrderSteps);
          if (cr.better_than(result_.best_result)) {
            result_.best = std::move(c);
            result_.best_result = cr;
          }
        }
      }
    descend(result_.best, result_.best_result, [&](const PipelineCandidate& c) { return device_moves(c); });
  }

  // Whether `c` has few enough tasks for every reinsertion (order_moves) and memory binds on a
  // device: there the list scheduler's rules miss orders that pack memory (a task put off until a
  // B or W frees room), so each layout's settled scheme gets its own order descent, not only the
  // best (the best by rules is often not the best by orders: llama-2l of bench/pipeline-exact.sh
  // at p=2, m=3, 7 GiB, 2.30% above the optimum without, at it with; nemotron-h-7l at m=3,
  // 21 GiB, 6.30% -> 4.21%).
  bool small_and_memory_bound(const PipelineCandidate& c) {
    if (!small_problem(c, evaluator_.microbatches())) return false;
    const std::vector<bool> binds = memory_binds(c);
    return std::find(binds.begin(), binds.end(), true) != binds.end();
  }

  // Where memory binds and the devices' host links are known: `c` with the first half of its
  // stages (whose activations wait longest for their B) offloading part of them to host memory,
  // as PipeOffload's selective offload does, so the layout's time-balanced partition gets the depth
  // it needs. The fraction and how early copies come back are then the schedule moves'.
  std::optional<PipelineCandidate> offloading_start(const PipelineCandidate& c) const {
    auto costs = evaluator_.costs(c);
    if (!costs || !c.offload.empty() || !has_host_links(costs.value())) return std::nullopt;
    PipelineCandidate m = c;
    if (!offload_first_half(m, costs.value(), memory_binds(c), kStartOffload)) return std::nullopt;
    m.reload_ahead = kStartReloadAhead;
    return m;
  }

  // Whether stage s of `c` can offload: memory binds on its device (`binding`), which has a host
  // link, and its F allocates something.
  static bool offloadable(const PipelineCandidate& c, const StageCosts& k, const std::vector<bool>& binding, int s) {
    const int d = c.placement[s];
    return d < static_cast<int>(binding.size()) && binding[d] && k.host_bandwidth[s] > 0 && k.mem_f[s] > 0;
  }

  // The first half of `m`'s stages (their activations wait longest for their B), those that can,
  // offload `fraction`; false when that changes nothing. Orders are the rules' own again.
  static bool offload_first_half(PipelineCandidate& m, const StageCosts& k, const std::vector<bool>& binding,
                                 double fraction) {
    const int stages = static_cast<int>(m.placement.size());
    if (m.offload.empty()) m.offload.assign(stages, 0.0);
    bool changed = false;
    for (int s = 0; s < (stages + 1) / 2; ++s)
      if (offloadable(m, k, binding, s) && m.offload[s] != fraction) {
        m.offload[s] = fraction;
        changed = true;
      }
    m.order.clear();
    if (std::all_of(m.offload.begin(), m.offload.end(), [](double f) { return f == 0; })) m.offload.clear();
    return changed;
  }

  // Partition and schedule descents in turn until none helps (each changes what the other sees).
  // A layout's own: partition chains, its stage-to-device map kept. A kicked scheme's: single
  // shifts (cheaper than chains), and device moves too (the kick may have left the layout's map).
  void settle(PipelineCandidate& c, CandidateResult& cr, bool kicked) {
    for (int round = 0; round < 4; ++round) {
      const bool partitioned = kicked ? descend(c, cr, [&](const PipelineCandidate& x) { return partition_moves(x, 1); })
                                      : descend_partition(c, cr);
      const bool scheduled = descend(c, cr, [&](const PipelineCandidate& x) { return schedule_moves(x); });
      const bool placed = kicked && descend(c, cr, [&](const PipelineCandidate& x) { return device_moves(x); });
      if (!partitioned && !scheduled && !placed) break;
    }
  }

  // A random jump out of `c`'s basin, in each of the three dimensions: one to four stage
  // boundaries shifted (alone or in chains of two), and by even odds the devices of two stages
  // swapped (maps no layout has), a stage split or merged (stage counts no layout has), F/B
  // priority flipped, one device's warm-up depth moved by up to four.
  PipelineCandidate kick(const PipelineCandidate& c, std::mt19937_64& rng) const {
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    PipelineCandidate k = c;
    k.order.clear();  // orders belong to one partition and set of rules
    const int stages = static_cast<int>(k.placement.size());
    // Draws in named steps: the order of a call's arguments is the compiler's.
    if (stages > 1 && !k.partition.empty())
      for (int shifts = uniform(1, 4); shifts > 0; --shifts) {
        const int direction = uniform(0, 1) ? 1 : -1, span = uniform(1, 2), boundary = uniform(0, stages - 2);
        shift_boundaries(k.partition, boundary, span, direction);
      }
    if (stages > 1 && uniform(0, 1)) {
      const int b = uniform(0, stages - 1), a = uniform(0, stages - 1);
      std::swap(k.placement[a], k.placement[b]);
    }
    if (!k.partition.empty() && uniform(0, 1)) change_stage_count(k, rng);
    if (uniform(0, 1)) k.rules.f_before_b = !k.rules.f_before_b;
    if (uniform(0, 1)) {
      int& depth = k.rules.in_flight_limit[uniform(0, static_cast<int>(k.rules.in_flight_limit.size()) - 1)];
      depth = std::max(1, depth + uniform(-4, 4));
    }
    return k;
  }

  // One stage more or fewer: a random stage of two or more layers split at a random layer, its
  // second half on a random device with room for another stage; or two random neighbouring
  // stages merged on the first one's device, when the second's device keeps a stage. Optima with
  // stage counts no layout has (jamba-4l of bench/pipeline-exact.sh at p=4/m=4: six stages,
  // two on each of two devices) are a split or merge from a layout's scheme, which the descents'
  // greedy split and merge rarely take.
  void change_stage_count(PipelineCandidate& c, std::mt19937_64& rng) const {
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int devices = evaluator_.source().devices(), stages = static_cast<int>(c.placement.size());
    const std::vector<int> per_device = stages_per_device(c, devices);
    if (uniform(0, 1)) {
      const int k = uniform(0, stages - 1), device = uniform(0, devices - 1);
      const auto [first, end] = c.partition[k];
      if (end - first < 2 || per_device[device] >= options_.max_chunks) return;
      split_stage(c, k, uniform(first + 1, end - 1), device);
    } else if (stages > 1) {
      const int k = uniform(0, stages - 2);
      if (c.placement[k] != c.placement[k + 1] && per_device[c.placement[k + 1]] < 2) return;
      merge_stages(c, k);
    }
  }

  // Iterated local search: each layout's settled scheme (and the best, without its task edits)
  // in turn is kicked and settled again, and the result replaces it when better; for
  // `kick_share` of the evaluations spent so far. The descents end in their layouts' local
  // optima, and better schemes often sit a few shifts, a swap and a deeper warm-up away (the
  // small Nemotron-H of bench/pipeline-exact.sh at p=2/m=4: 154.4 ms by the descents, the optimum
  // 148.1 ms by kicks on the interleaved layout). The best kicked scheme gets its task-order
  // descent and is kept when it beats the best.
  void kick_phase() {
    if (options_.kick_share <= 0 || out_of_budget()) return;
    PipelineCandidate best = result_.best;
    best.order.clear();
    if (auto r = evaluator_.evaluate(best)) kick_bases_.push_back({best, r.value()});
    if (kick_bases_.empty()) return;
    in_phase("kick", result_.passes);
    const std::int64_t until = evaluations() + static_cast<std::int64_t>(options_.kick_share * evaluations());
    std::mt19937_64 rng(options_.seed);
    int refused = 0;  // in a row: a refused kick costs no evaluation, so the share alone would not end them
    for (std::size_t k = 0; evaluations() < until && !out_of_budget() && refused < kMaxRefusedKicks; ++k) {
      auto& [base, base_result] = kick_bases_[k % kick_bases_.size()];
      PipelineCandidate c = kick(base, rng);
      auto r = evaluator_.evaluate(c);
      refused = r ? 0 : refused + 1;
      if (!r) continue;  // a scheme the source refuses
      CandidateResult cr = r.value();
      settle(c, cr, /*kicked=*/true);
      if (cr.better_than(base_result)) {
        base = std::move(c);
        base_result = cr;
      }
    }
    auto top = std::min_element(kick_bases_.begin(), kick_bases_.end(),
                                [](const auto& a, const auto& b) { return a.second.better_than(b.second); });
    PipelineCandidate c = top->first;
    CandidateResult cr = top->second;
    order_descent(c, cr, kMaxOrderSteps);
    if (cr.better_than(result_.best_result)) {
      result_.best = std::move(c);
      result_.best_result = cr;
    }
    report("kick", result_.passes);
  }

  // Whether some device of `c` has a memory limit (else the memory rules change nothing).
  bool memory_limited(const PipelineCandidate& c) const {
    auto costs = evaluator_.costs(c);
    return costs && std::any_of(costs.value().max_mem.begin(), costs.value().max_mem.end(), [](double m) { return m > 0; });
  }

  std::vector<PipelineCandidate> schedule_moves(const PipelineCandidate& c) const {
    std::vector<PipelineCandidate> moves;
    auto add = [&](auto change) {
      moves.push_back(c);
      moves.back().order.clear();  // the rules' own orders
      change(moves.back().rules);
    };
    if (!c.rules.respect_memory) add([](ListScheduleRules& r) { r.respect_memory = true; });
    add([](ListScheduleRules& r) { r.f_before_b = !r.f_before_b; });
    add([](ListScheduleRules& r) { r.delay_w = !r.delay_w; });
    add([](ListScheduleRules& r) { r.split_backward = !r.split_backward; });
    // What an entry F reserves: on small problems each of the three; on larger ones all or the
    // new microbatch's share, where the third measured no better and moved the descents' paths
    // into worse basins (nemotron-h-8b 1.630 -> 1.638 s, mixtral-8x7b 3.056 -> 3.101 s).
    if (c.rules.respect_memory && memory_limited(c))
      for (MemoryReserve reserve : {MemoryReserve::all, MemoryReserve::newcomer, MemoryReserve::held})
        if (reserve != c.rules.reserve &&
            (reserve != MemoryReserve::held || small_problem(c, evaluator_.microbatches())))
          add([reserve](ListScheduleRules& r) { r.reserve = reserve; });
    const int devices = static_cast<int>(c.rules.in_flight_limit.size());
    // Every device's warm-up depth a step, two, four and eight deeper or shallower: the depths
    // move together when the whole pipeline's warm-up is too short or too long, which single
    // devices' steps reach only through slower schemes (nemotron-h-8b: 1.638 s -> 1.630 s).
    const int shallowest = *std::min_element(c.rules.in_flight_limit.begin(), c.rules.in_flight_limit.end());
    for (int step : {1, 2, 4, 8}) {
      add([step](ListScheduleRules& r) { for (int& l : r.in_flight_limit) l += step; });
      if (shallowest > step) add([step](ListScheduleRules& r) { for (int& l : r.in_flight_limit) l -= step; });
    }
    // Each device's warm-up depth a step, two, four and eight away, halved and doubled: the best
    // depth of one device is seldom a single step away once the others have moved.
    const int deepest = 2 * static_cast<int>(c.placement.size());
    append_recompute_moves(c, moves);
    append_offload_moves(c, moves);
    for (int d = 0; d < devices; ++d) {
      const int now = c.rules.in_flight_limit[d];
      std::vector<int> depths = {now / 2, 2 * now};
      for (int step : {1, 2, 4, 8}) depths.insert(depths.end(), {now - step, now + step});
      std::sort(depths.begin(), depths.end());
      depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
      for (int limit : depths)
        if (limit >= 1 && limit != now && limit <= std::max(deepest, now + 1))
          add([d, limit](ListScheduleRules& r) { r.in_flight_limit[d] = limit; });
    }
    return moves;
  }

  // Memory for depth: every stage of one device recomputes its activations (F keeps only its input,
  // B runs F again), or none does; every stage of every device; no stage at all. Only for costs that know the sizes (models).
  void append_recompute_moves(const PipelineCandidate& c, std::vector<PipelineCandidate>& moves) const {
    auto costs = evaluator_.costs(c);
    if (!costs || costs.value().input_bytes.empty()) return;
    const int devices = static_cast<int>(c.rules.in_flight_limit.size());
    for (int d = 0; d < devices; ++d) {
      std::vector<int> on_device;
      for (int s = 0; s < static_cast<int>(c.placement.size()); ++s)
        if (c.placement[s] == d) on_device.push_back(s);
      if (on_device.empty()) continue;
      std::vector<int> toggled;
      const bool all = std::includes(c.recompute.begin(), c.recompute.end(), on_device.begin(), on_device.end());
      if (all) std::set_difference(c.recompute.begin(), c.recompute.end(), on_device.begin(), on_device.end(),
                                   std::back_inserter(toggled));
      else std::set_union(c.recompute.begin(), c.recompute.end(), on_device.begin(), on_device.end(),
                          std::back_inserter(toggled));
      moves.push_back(c);
      moves.back().order.clear();  // the rules' own orders, planned with the new memory
      moves.back().recompute = std::move(toggled);
    }
    const int stages = static_cast<int>(c.placement.size());
    if (static_cast<int>(c.recompute.size()) < stages) {  // every stage: memory binds everywhere
      moves.push_back(c);
      moves.back().order.clear();
      moves.back().recompute.resize(stages);
      std::iota(moves.back().recompute.begin(), moves.back().recompute.end(), 0);
    }
    if (!c.recompute.empty()) {
      moves.push_back(c);
      moves.back().order.clear();
      moves.back().recompute.clear();
    }
  }

  // Whether some stage's device has a host link to offload over (models on clusters that give it).
  static bool has_host_links(const StageCosts& costs) {
    return costs.host_bandwidth.size() == static_cast<std::size_t>(costs.num_stages()) &&
           std::any_of(costs.host_bandwidth.begin(), costs.host_bandwidth.end(), [](double b) { return b > 0; });
  }

  // Per device, whether memory binds there: `c`'s orders planned without the memory rule would
  // not fit it (empty when that cannot be evaluated, or the budget is spent: it costs an evaluation).
  std::vector<bool> memory_binds(const PipelineCandidate& c) const {
    if (out_of_budget()) return {};
    PipelineCandidate free = c;
    free.order.clear();
    free.rules.respect_memory = false;
    auto unlimited = evaluator_.evaluate(free);
    auto costs = evaluator_.costs(c);
    if (!unlimited || !costs) return {};
    const std::vector<double>& peak = unlimited.value().evaluation.peak_memory;
    const std::vector<double>& limit = costs.value().max_mem;
    std::vector<bool> binds(peak.size(), false);
    for (std::size_t d = 0; d < peak.size() && d < limit.size(); ++d) binds[d] = limit[d] > 0 && peak[d] > limit[d];
    return binds;
  }

  // Memory for depth without recomputing: the first half of the stages (their activations wait
  // longest) offload a quarter, half, three quarters or all of their activations to host memory
  // between F and B (one step where single stages' steps cross a plateau); a device's offloading
  // stages a quarter or an eighth more or less, or none; the copies back are issued a task earlier or
  // later, or twice or half as early. Only on devices where memory binds, and where the costs
  // know the devices' host links; stages that offload may always stop.
  void append_offload_moves(const PipelineCandidate& c, std::vector<PipelineCandidate>& moves) const {
    auto costs = evaluator_.costs(c);
    if (!costs || !has_host_links(costs.value())) return;
    const std::vector<bool> binding = memory_binds(c);
    const StageCosts& k = costs.value();
    const int stages = static_cast<int>(c.placement.size());
    // Every offloading stage of device d at its fraction changed by `step` (0: none at all).
    auto on_device = [&](int d, double step) {
      PipelineCandidate m = c;
      m.order.clear();  // the rules' own orders, planned with the new memory
      bool changed = false;
      for (int s = 0; s < stages; ++s)
        if (c.placement[s] == d && m.offload[s] > 0) {
          const double fraction = step == 0 ? 0.0 : std::clamp(m.offload[s] + step, kOffloadStep / 2, 1.0);
          changed = changed || fraction != m.offload[s];
          m.offload[s] = fraction;
        }
      if (std::all_of(m.offload.begin(), m.offload.end(), [](double f) { return f == 0; })) m.offload.clear();
      if (changed) moves.push_back(std::move(m));
    };
    auto can_offload = [&](int s) { return offloadable(c, k, binding, s); };
    for (double fraction : {0.25, 0.5, 0.75, 1.0}) {
      PipelineCandidate m = c;
      if (offload_first_half(m, k, binding, fraction)) moves.push_back(std::move(m));
    }
    if (!c.offload.empty()) {  // finer, per device (the others start by the half)
      std::vector<bool> offloading(binding.size(), false), can_grow(binding.size(), false);
      for (int s = 0; s < stages; ++s)
        if (c.offload[s] > 0 && c.placement[s] < static_cast<int>(binding.size())) {
          offloading[c.placement[s]] = true;
          can_grow[c.placement[s]] = can_grow[c.placement[s]] || can_offload(s);
        }
      for (std::size_t d = 0; d < offloading.size(); ++d) {
        if (!offloading[d]) continue;
        on_device(static_cast<int>(d), 0);
        for (double step : {2 * kOffloadStep, kOffloadStep}) {
          if (can_grow[d]) on_device(static_cast<int>(d), step);
          on_device(static_cast<int>(d), -step);
        }
      }
    }
    if (!c.offload.empty())
      for (int ahead : {c.reload_ahead - 1, c.reload_ahead + 1, c.reload_ahead / 2, 2 * c.reload_ahead})
        if (ahead >= 1 && ahead <= kMaxReloadAhead && ahead != c.reload_ahead) {
          moves.push_back(c);
          moves.back().reload_ahead = ahead;
        }
  }

  void schedule_phase() {
    descend(result_.best, result_.best_result, [&](const PipelineCandidate& c) { return schedule_moves(c); });
  }

  // Task moves on the best scheme's own orders, aimed at its largest bubbles: where a device
  // waits before a task, one of the next few tasks of that device is moved in front of it (an F
  // or B advanced into the gap, or a W run there instead of later).
  std::vector<PipelineCandidate> order_moves(const PipelineCandidate& c) {
    std::vector<PipelineCandidate> moves;
    auto built = evaluator_.build(c);
    auto timed = evaluator_.evaluate(c, /*with_starts=*/true);
    if (!built || !timed || !timed.value().evaluation.completed) return moves;
    const auto& [scheme, costs] = built.value();
    const auto& start = timed.value().evaluation.start;
    auto duration = [&](const PipeTask& t) { return task_cost(t.op, t.stage, costs).time; };
    struct Gap {
      double idle;
      int device, position;
    };
    std::vector<Gap> gaps;
    const double tolerance = 1e-9 * timed.value().iteration_time;
    for (int d = 0; d < scheme.num_devices(); ++d)
      for (std::size_t j = 1; j < scheme.schedule[d].size(); ++j) {
        const double idle = start[d][j] - (start[d][j - 1] + duration(scheme.schedule[d][j - 1]));
        if (idle > tolerance) gaps.push_back({idle, d, static_cast<int>(j)});
      }
    const std::size_t keep = std::min<std::size_t>(gaps.size(), kGapsPerOrderStep);
    std::partial_sort(gaps.begin(), gaps.begin() + keep, gaps.end(), [](const Gap& a, const Gap& b) { return a.idle > b.idle; });
    for (std::size_t g = 0; g < keep; ++g) {
      const auto& list = scheme.schedule[gaps[g].device];
      const int j = gaps[g].position;
      for (int q = j + 1; q < static_cast<int>(list.size()) && q <= j + kTasksPulledIntoGap; ++q) {
        PipelineCandidate m = c;
        m.order = scheme.schedule;
        auto& moved = m.order[gaps[g].device];
        std::rotate(moved.begin() + j, moved.begin() + q, moved.begin() + q + 1);  // task q goes before task j
        moves.push_back(std::move(m));
      }
    }
    // Small problems afford every reinsertion of a task on its device, earlier and then later:
    // where bubbles are few and short, the gain is in orders no single bubble points at. Later
    // reinsertions reach in one move what takes several earlier ones (an F put off past the B
    // and W that free its room: llama-2l of bench/pipeline-exact.sh at p=2, m=4 and 6, 8 GiB,
    // 1.03% and 1.39% above the optimum with earlier ones alone, at it with both).
    if (small_problem(c, evaluator_.microbatches())) {
      auto reinsert = [&](int d, int from, int to) {
        PipelineCandidate m = c;
        m.order = scheme.schedule;
        auto& moved = m.order[d];
        if (to < from) std::rotate(moved.begin() + to, moved.begin() + from, moved.begin() + from + 1);
        else std::rotate(moved.begin() + from, moved.begin() + from + 1, moved.begin() + to + 1);
        moves.push_back(std::move(m));
      };
      for (int d = 0; d < scheme.num_devices(); ++d)
        for (int q = 1; q < static_cast<int>(scheme.schedule[d].size()); ++q)
          for (int j = 0; j < q; ++j) reinsert(d, q, j);  // task q goes before task j
      for (int d = 0; d < scheme.num_devices(); ++d)
        for (int q = 0; q + 1 < static_cast<int>(scheme.schedule[d].size()); ++q)
          for (int j = q + 1; j < static_cast<int>(scheme.schedule[d].size()); ++j) reinsert(d, q, j);  // task q goes after task j
    }
    return moves;
  }

  // Task moves on `c`'s orders (the list scheduler's made explicit first: same time), `steps` at most.
  void order_descent(PipelineCandidate& c, CandidateResult& cr, int steps) {
    if (out_of_budget()) return;
    if (c.order.empty()) {
      auto built = evaluator_.build(c);
      if (!built) return;
      c.order = built.value().first.schedule;
    }
    descend(c, cr, [&](const PipelineCandidate& x) { return order_moves(x); }, steps);
  }

  void order_phase() { order_descent(result_.best, result_.best_result, kMaxOrderSteps); }

  CandidateEvaluator& evaluator_;
  const PipelineTuneOptions& options_;
  std::chrono::steady_clock::time_point begin_;
  PipelineTuneResult result_;
  std::int64_t elsewhere_ = 0;  // evaluations through options_.evaluate_moves, and the walk's beside the kicks
  std::atomic<bool> abandon_walk_{false};  // the tuning ended (a failure): the walk beside the kicks stops
  const char* phase_ = "start";
  int pass_ = 0;
  double last_report_ = 0;  // seconds() at the last progress report or heartbeat
  // The kick phase's bases: each layout's settled scheme from the first placement phase.
  std::vector<std::pair<PipelineCandidate, CandidateResult>> kick_bases_;
};

}  // namespace

Result<PipelineTuneResult> tune_pipeline(CandidateEvaluator& evaluator, const std::vector<PipelineCandidate>& starts,
                                         const PipelineTuneOptions& options) {
  Tuner tuner(evaluator, options);
  auto ok = tuner.start(starts);
  if (!ok) return ok.error();
  return tuner.run();
}

}  // namespace gantry
