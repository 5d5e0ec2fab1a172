#include "tuner/pipeline/pipeline_random_search.hpp"

#include <algorithm>
#include <cmath>

namespace gantry {

namespace {

int uniform(std::mt19937_64& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// `stages` non-empty ranges of consecutive layers with random cuts.
Partition random_partition(int layers, int stages, std::mt19937_64& rng) {
  std::vector<int> cuts(layers - 1);
  for (int i = 0; i < layers - 1; ++i) cuts[i] = i + 1;
  std::shuffle(cuts.begin(), cuts.end(), rng);
  cuts.resize(stages - 1);
  std::sort(cuts.begin(), cuts.end());
  Partition p;
  int first = 0;
  for (int c : cuts) {
    p.emplace_back(first, c);
    first = c;
  }
  p.emplace_back(first, layers);
  return p;
}

void randomize_rules(ListScheduleRules& rules, int stages, std::mt19937_64& rng) {
  for (int& limit : rules.in_flight_limit) limit = uniform(rng, 1, 2 * stages);
  rules.f_before_b = uniform(rng, 0, 1);
  rules.delay_w = uniform(rng, 0, 1);
  rules.split_backward = uniform(rng, 0, 1);
  rules.reserve = static_cast<MemoryReserve>(uniform(rng, 0, 2));
}

// How device d's stages keep their activations from F to B: held (0), recomputed in B (1), or a
// quarter, half, three quarters or all offloaded to host memory (2 to 5); those `memory` allows.
std::vector<int> memory_modes(const MemoryMoves& memory, int d) {
  std::vector<int> modes = {0};
  if (memory.recompute) modes.push_back(1);
  if (d < static_cast<int>(memory.offload.size()) && memory.offload[d]) modes.insert(modes.end(), {2, 3, 4, 5});
  return modes;
}

int random_mode(const MemoryMoves& memory, int d, std::mt19937_64& rng) {
  const std::vector<int> modes = memory_modes(memory, d);
  return modes[uniform(rng, 0, static_cast<int>(modes.size()) - 1)];
}

bool has_memory_moves(const MemoryMoves& memory) { return memory.recompute || memory.offloads(); }

// Device d's stages of `c` keep their activations by `mode` (memory_modes).
void set_memory_mode(PipelineCandidate& c, int d, int mode) {
  const int stages = static_cast<int>(c.placement.size());
  std::vector<int> recompute;
  for (int s : c.recompute)
    if (c.placement[s] != d) recompute.push_back(s);
  if (mode == 1)
    for (int s = 0; s < stages; ++s)
      if (c.placement[s] == d) recompute.push_back(s);
  std::sort(recompute.begin(), recompute.end());
  c.recompute = std::move(recompute);
  if (mode >= 2 && c.offload.empty()) c.offload.assign(stages, 0.0);
  if (!c.offload.empty())
    for (int s = 0; s < stages; ++s)
      if (c.placement[s] == d) c.offload[s] = mode >= 2 ? 0.25 * (mode - 1) : 0.0;
  if (std::all_of(c.offload.begin(), c.offload.end(), [](double f) { return f == 0; })) c.offload.clear();
}

int random_reload_ahead(std::mt19937_64& rng) { return 1 << uniform(rng, 0, 4); }

// Half of the time `c` as it is; otherwise each device's stages keep their activations by a random mode.
void randomize_memory(PipelineCandidate& c, int devices, const MemoryMoves& memory, std::mt19937_64& rng) {
  if (!has_memory_moves(memory) || uniform(rng, 0, 1)) return;
  for (int d = 0; d < devices; ++d) set_memory_mode(c, d, random_mode(memory, d, rng));
  if (!c.offload.empty()) c.reload_ahead = random_reload_ahead(rng);
}

// A random device's stages keep their activations by a random mode; or, when the candidate
// offloads, by even odds its copies back come a task earlier or later, or twice or half as early.
void change_memory(PipelineCandidate& c, int devices, const MemoryMoves& memory, std::mt19937_64& rng) {
  if (!c.offload.empty() && uniform(rng, 0, 1)) {
    const int ahead[] = {c.reload_ahead - 1, c.reload_ahead + 1, c.reload_ahead / 2, 2 * c.reload_ahead};
    c.reload_ahead = std::clamp(ahead[uniform(rng, 0, 3)], 1, std::max(kMaxReloadAhead, c.reload_ahead));
    return;
  }
  const int d = uniform(rng, 0, devices - 1);
  set_memory_mode(c, d, random_mode(memory, d, rng));
}

// One random change of `c` (a valid candidate when the source accepts it).
PipelineCandidate neighbour(const PipelineCandidate& c, const StageSource& source, int max_chunks, AnnealMoves moves,
                            const MemoryMoves& memory, std::mt19937_64& rng) {
  PipelineCandidate n = c;
  n.order.clear();  // the list scheduler's orders: explicit ones belong to one placement and rules
  const int stages = static_cast<int>(c.placement.size()), devices = source.devices();
  // Moves 0 to 7 change the partition, devices, limits and rules; 8 the memory (when allowed);
  // the last two draw a new random candidate (with_new_layouts).
  const bool memory_move = has_memory_moves(memory);
  const int last = 7 + (memory_move ? 1 : 0) + (moves == AnnealMoves::with_new_layouts ? 2 : 0);
  int move = uniform(rng, 0, last);
  if (move == 8 && !memory_move) move = 9;  // numbers past the memory move draw new candidates
  switch (move) {
    case 0: case 1: case 2: case 3:  // shift a boundary
      if (stages > 1 && !n.partition.empty()) {
        const int k = uniform(rng, 0, stages - 2);
        if (uniform(rng, 0, 1) && n.partition[k].second - n.partition[k].first > 1) {
          --n.partition[k].second;
          --n.partition[k + 1].first;
        } else if (n.partition[k + 1].second - n.partition[k + 1].first > 1) {
          ++n.partition[k].second;
          ++n.partition[k + 1].first;
        }
      }
      break;
    case 4: {  // swap two devices
      const int a = uniform(rng, 0, devices - 1), b = uniform(rng, 0, devices - 1);
      for (int& d : n.placement) d = d == a ? b : d == b ? a : d;
      std::swap(n.rules.in_flight_limit[a], n.rules.in_flight_limit[b]);
      break;
    }
    case 5: case 6: {  // a device's limit
      int& limit = n.rules.in_flight_limit[uniform(rng, 0, devices - 1)];
      limit = std::max(1, limit + (uniform(rng, 0, 1) ? 1 : -1));
      break;
    }
    case 7:  // a rule
      switch (uniform(rng, 0, 3)) {
        case 0: n.rules.f_before_b = !n.rules.f_before_b; break;
        case 1: n.rules.delay_w = !n.rules.delay_w; break;
        case 2: n.rules.reserve = static_cast<MemoryReserve>((static_cast<int>(n.rules.reserve) + uniform(rng, 1, 2)) % 3); break;
        default: n.rules.split_backward = !n.rules.split_backward; break;
      }
      break;
    case 8:
      change_memory(n, devices, memory, rng);
      break;
    default: {  // a new random candidate (another layout)
      auto fresh = random_candidate(source, max_chunks, rng, memory);
      if (fresh) n = std::move(fresh).value();
    }
  }
  return n;
}

}  // namespace

MemoryMoves memory_moves(const CandidateEvaluator& evaluator) {
  auto any = layout_candidate(evaluator.source(), StageLayout{1, false});
  if (!any) return {};
  auto costs = evaluator.costs(any.value());
  if (!costs) return {};
  const StageCosts& k = costs.value();
  MemoryMoves m;
  m.recompute = !k.input_bytes.empty();
  m.offload.assign(evaluator.source().devices(), false);
  for (int s = 0; s < k.num_stages() && s < static_cast<int>(k.host_bandwidth.size()); ++s)
    if (k.host_bandwidth[s] > 0) m.offload[any.value().placement[s]] = true;
  return m;
}

bool MemoryMoves::offloads() const { return std::find(offload.begin(), offload.end(), true) != offload.end(); }

Result<PipelineCandidate> random_candidate(const StageSource& source, int max_chunks, std::mt19937_64& rng,
                                           const MemoryMoves& memory) {
  const int chunks = uniform(rng, 1, std::max(1, max_chunks));
  const StageLayout layout{chunks, chunks == 2 && uniform(rng, 0, 1) == 1};
  auto base = layout_candidate(source, layout);
  if (!base) return base.error();
  PipelineCandidate c = std::move(base).value();
  const int stages = static_cast<int>(c.placement.size());
  if (!c.partition.empty()) c.partition = random_partition(c.partition.back().second, stages, rng);
  randomize_rules(c.rules, stages, rng);
  randomize_memory(c, source.devices(), memory, rng);
  return c;
}

Result<PipelineSearchResult> random_search(CandidateEvaluator& evaluator, std::int64_t evaluations, int max_chunks,
                                           std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const MemoryMoves memory = memory_moves(evaluator);
  PipelineSearchResult out;
  out.best_result.iteration_time = INFINITY;
  for (std::int64_t i = 0; i < evaluations; ++i) {
    auto c = random_candidate(evaluator.source(), max_chunks, rng, memory);
    if (!c) continue;  // a layout with more stages than layers
    auto r = evaluator.evaluate(c.value());
    ++out.evaluations;
    if (!r) continue;
    if (out.best.placement.empty() || r.value().iteration_time < out.best_result.iteration_time) {
      out.best = std::move(c).value();
      out.best_result = r.value();
    }
  }
  if (out.best.placement.empty()) return make_error("random search: no candidate could be evaluated");
  return out;
}

Result<PipelineSearchResult> anneal(CandidateEvaluator& evaluator, const PipelineCandidate& start,
                                    std::int64_t evaluations, int max_chunks, std::uint64_t seed,
                                    const std::function<bool()>& should_stop, AnnealMoves moves) {
  std::mt19937_64 rng(seed);
  const MemoryMoves memory = moves == AnnealMoves::with_new_layouts ? memory_moves(evaluator) : MemoryMoves{};
  auto first = evaluator.evaluate(start);
  if (!first) return first.error();
  PipelineSearchResult out;
  out.best = start;
  out.best_result = first.value();
  out.evaluations = 1;
  PipelineCandidate current = start;
  double current_time = first.value().iteration_time;
  // From 5% of the start's time down to 0.01% over the run: early on a 5% worse move is taken
  // about one time in three, at the end practically never. A start that does not fit has no time:
  // the first that fits sets the scale (a fixed one would be hot for a model of milliseconds and
  // cold for one of minutes).
  double t0 = 0, t1 = 0;
  auto scale_to = [&](double time) {
    t0 = 0.05 * time;
    t1 = 1e-4 * time;
  };
  if (std::isfinite(current_time)) scale_to(current_time);
  std::uniform_real_distribution<double> unit(0, 1);
  for (std::int64_t i = 1; i < evaluations && !(should_stop && should_stop()); ++i) {
    const double temperature = t0 * std::pow(t1 / t0, static_cast<double>(i) / std::max<std::int64_t>(1, evaluations - 1));
    PipelineCandidate next = neighbour(current, evaluator.source(), max_chunks, moves, memory, rng);
    auto r = evaluator.evaluate(next);
    ++out.evaluations;
    if (!r) continue;
    const double time = r.value().iteration_time;
    if (!std::isfinite(time)) continue;
    if (!std::isfinite(current_time)) scale_to(time);  // taken below, whatever the temperature
    if (time < current_time || unit(rng) < std::exp(-(time - current_time) / temperature)) {
      current = next;
      current_time = time;
    }
    if (time < out.best_result.iteration_time) {
      out.best = std::move(next);
      out.best_result = r.value();
    }
  }
  return out;
}

}  // namespace gantry
