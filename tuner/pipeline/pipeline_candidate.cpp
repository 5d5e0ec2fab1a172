#include "tuner/pipeline/pipeline_candidate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "tuner/pipeline/schedules.hpp"

namespace gantry {

namespace {
constexpr std::size_t kMaxCompiled = 64;  // structures kept (each about 20 bytes per task)
constexpr std::size_t kMaxCosts = 256;    // stage costs kept (each a few hundred bytes per stage)
// Results remembered, in bytes (estimated: each candidate's entries, its result's per-device
// figures and the map's node), and the largest explicit order remembered: a longer one is seldom
// asked again (its moves edit it), and hashing and copying it cost a share of simulating it.
constexpr std::size_t kMaxRememberedBytes = std::size_t{32} << 20;
constexpr std::size_t kMaxRememberedTasks = 4096;
constexpr std::size_t kNodeBytes = 256;  // the map's node, the vectors' headers and allocations

// FNV-1a over a candidate's integers.
struct Fnv {
  std::size_t h = 1469598103934665603ull;
  void add(long long v) {
    h ^= static_cast<std::size_t>(v);
    h *= 1099511628211ull;
  }
};

std::size_t order_tasks(const PipelineCandidate& c) {
  std::size_t n = 0;
  for (const auto& list : c.order) n += list.size();
  return n;
}

std::size_t remembered_bytes(const PipelineCandidate& c, const CandidateResult& r) {
  return kNodeBytes + sizeof(std::pair<int, int>) * c.partition.size() +
         sizeof(int) * (c.placement.size() + c.recompute.size() + c.rules.in_flight_limit.size()) +
         sizeof(double) * c.offload.size() +
         sizeof(PipeTask) * order_tasks(c) + sizeof(double) * (r.evaluation.busy.size() + r.evaluation.peak_memory.size());
}
const std::string kCandidateSource = "pipeline candidate";
}  // namespace

bool PipelineCandidate::operator==(const PipelineCandidate& o) const {
  const ListScheduleRules &a = rules, &b = o.rules;
  return partition == o.partition && placement == o.placement && a.in_flight_limit == b.in_flight_limit &&
         a.f_before_b == b.f_before_b && a.split_backward == b.split_backward && a.delay_w == b.delay_w &&
         a.respect_memory == b.respect_memory && a.reserve == b.reserve && order == o.order &&
         recompute == o.recompute && offload == o.offload && (offload.empty() || reload_ahead == o.reload_ahead);
}

std::string candidate_to_json(const PipelineCandidate& c) {
  nlohmann::json j;
  j["partition"] = nlohmann::json::array();
  for (auto [first, end] : c.partition) j["partition"].push_back({first, end});
  j["placement"] = c.placement;
  j["in_flight_limit"] = c.rules.in_flight_limit;
  j["f_before_b"] = c.rules.f_before_b;
  j["split_backward"] = c.rules.split_backward;
  j["delay_w"] = c.rules.delay_w;
  j["respect_memory"] = c.rules.respect_memory;
  if (c.rules.reserve != MemoryReserve::all) j["reserve"] = to_string(c.rules.reserve);  // absent: all (stored before it)
  if (c.rules.reserve == MemoryReserve::newcomer) j["reserve_for_all"] = false;  // as a gantry before "reserve" reads it
  if (!c.order.empty()) {
    j["order"] = nlohmann::json::array();
    for (const auto& device : c.order) {
      nlohmann::json list = nlohmann::json::array();
      for (const PipeTask& t : device)
        list.push_back(std::string(to_string(t.op)) + " " + std::to_string(t.microbatch) + " " + std::to_string(t.stage));
      j["order"].push_back(std::move(list));
    }
  }
  if (!c.recompute.empty()) j["recompute"] = c.recompute;
  if (!c.offload.empty()) {
    j["offload"] = c.offload;
    j["reload_ahead"] = c.reload_ahead;
  }
  return j.dump();
}

Result<PipelineCandidate> candidate_from_json(const std::string& text, const std::string& source) try {
  const nlohmann::json j = nlohmann::json::parse(text);
  PipelineCandidate c;
  for (const auto& range : j.at("partition")) c.partition.emplace_back(range.at(0).get<int>(), range.at(1).get<int>());
  c.placement = j.at("placement").get<std::vector<int>>();
  c.rules.in_flight_limit = j.at("in_flight_limit").get<std::vector<int>>();
  c.rules.f_before_b = j.at("f_before_b").get<bool>();
  c.rules.split_backward = j.at("split_backward").get<bool>();
  c.rules.delay_w = j.at("delay_w").get<bool>();
  c.rules.respect_memory = j.at("respect_memory").get<bool>();
  if (j.contains("reserve")) {
    auto reserve = memory_reserve_from(j.at("reserve").get<std::string>());
    if (!reserve) return make_error(source + ": reserve must be all, newcomer or held (got " + j.at("reserve").dump() + ")");
    c.rules.reserve = *reserve;
  } else if (j.contains("reserve_for_all") && !j.at("reserve_for_all").get<bool>()) {
    c.rules.reserve = MemoryReserve::newcomer;  // candidates stored before the held rule
  }
  if (j.contains("order")) {  // read as a scheme's schedule is
    auto tasks = read_schedule_lists(j.at("order").dump(), source + ": order");
    if (!tasks) return tasks.error();
    c.order = std::move(tasks).value();
  }
  if (j.contains("recompute")) {
    c.recompute = j.at("recompute").get<std::vector<int>>();
    if (Status ok = normalize_recompute(c.recompute, static_cast<int>(c.placement.size()), source + ": recompute"); !ok)
      return ok.error();
  }
  if (j.contains("offload")) {
    c.offload = j.at("offload").get<std::vector<double>>();
    if (Status ok = normalize_offload(c.offload, static_cast<int>(c.placement.size()), source + ": offload"); !ok)
      return ok.error();
    const nlohmann::json ahead = j.value("reload_ahead", nlohmann::json(2));
    if (!ahead.is_number_integer() || ahead.get<std::int64_t>() < 1 || ahead.get<std::int64_t>() > kReloadAheadLimit)
      return make_error(source + ": reload_ahead must be a whole number of tasks from 1 to 2^20 (got " + ahead.dump() + ")");
    c.reload_ahead = ahead.get<int>();
  }
  return c;
} catch (const nlohmann::json::exception& e) {
  return make_error(source + ": not a pipeline candidate: " + e.what());
}

std::string describe_candidate(const PipelineCandidate& c, int devices) {
  const int stages = static_cast<int>(c.placement.size());
  std::string text = std::to_string(stages) + " stages on " + std::to_string(devices) + " devices";
  const bool v = stages == 2 * devices && c.placement == stage_placement(devices, {2, true});
  const bool plain = stages % devices == 0 && c.placement == stage_placement(devices, {stages / devices, false});
  text += v ? " (V)" : plain ? "" : " (non-contiguous)";
  text += c.rules.split_backward ? ", B/W split" : ", fused BW";
  text += c.rules.delay_w ? ", W delayed" : ", W at once";
  text += c.rules.f_before_b ? ", F first" : ", B first";
  if (c.rules.respect_memory && c.rules.reserve == MemoryReserve::newcomer) text += ", older microbatches' later F wait for room";
  if (c.rules.respect_memory && c.rules.reserve == MemoryReserve::held) text += ", a new microbatch's later F wait for room";
  text += ", in flight";
  for (int l : c.rules.in_flight_limit) text += " " + std::to_string(l);
  if (!c.order.empty()) text += ", task order edited";
  if (!c.recompute.empty()) {
    text += ", recompute on stage";
    if (c.recompute.size() > 1) text += "s";
    for (int s : c.recompute) text += " " + std::to_string(s);
  }
  if (!c.offload.empty()) {
    text += ", offload";
    for (std::size_t s = 0; s < c.offload.size(); ++s)
      if (c.offload[s] > 0) text += " " + std::to_string(s) + ":" + std::to_string(static_cast<int>(std::lround(100 * c.offload[s]))) + "%";
    text += " (copies back " + std::to_string(c.reload_ahead) + " tasks ahead)";
  }
  return text;
}

std::vector<int> stages_per_device(const PipelineCandidate& candidate, int devices) {
  std::vector<int> count(devices, 0);
  for (int d : candidate.placement) ++count[d];
  return count;
}

ListScheduleRules default_rules(const std::vector<int>& placement, int devices) {
  const int stages = static_cast<int>(placement.size());
  ListScheduleRules rules;
  // Chunk activations are 1/chunks of a microbatch's: the same memory admits chunks x as many.
  for (int d = 0; d < devices; ++d) rules.in_flight_limit.push_back(stages == devices ? devices - d : stages - 1);
  return rules;
}

Result<PipelineCandidate> layout_candidate(const StageSource& source, const StageLayout& layout) {
  auto set = source.stages(layout);
  if (!set) return set.error();
  PipelineCandidate c;
  c.partition = std::move(set.value().partition);
  c.placement = std::move(set.value().placement);
  c.rules = default_rules(c.placement, source.devices());
  return c;
}

bool CandidateResult::better_than(const CandidateResult& other) const {
  const double a = iteration_time, b = other.iteration_time;
  if (!std::isfinite(a)) return false;
  if (!std::isfinite(b)) return true;
  if (std::abs(a - b) > 1e-12 * std::max(a, b)) return a < b;
  auto spread = [](const std::vector<double>& busy) {
    double top = 0, squares = 0;
    for (double x : busy) {
      top = std::max(top, x);
      squares += x * x;
    }
    return std::pair{top, squares};
  };
  const auto [top_a, sq_a] = spread(evaluation.busy);
  const auto [top_b, sq_b] = spread(other.evaluation.busy);
  if (std::abs(top_a - top_b) > 1e-12 * std::max(top_a, top_b)) return top_a < top_b;
  return sq_a < sq_b * (1 - 1e-12);
}

CandidateEvaluator::CandidateEvaluator(const StageSource& source, int microbatches, LinkModel links)
    : source_(source), microbatches_(microbatches), links_(links) {}

PipelineScheme CandidateEvaluator::shape(const PipelineCandidate& candidate) const {
  PipelineScheme shape;
  shape.num_microbatches = microbatches_;
  shape.partition = candidate.partition;
  shape.placement = candidate.placement;
  shape.schedule.resize(source_.devices());
  shape.recompute = candidate.recompute;
  // Each stage once (a stage out of range is the costs' error).
  std::sort(shape.recompute.begin(), shape.recompute.end());
  shape.recompute.erase(std::unique(shape.recompute.begin(), shape.recompute.end()), shape.recompute.end());
  shape.offload = candidate.offload;
  shape.reload_ahead = candidate.reload_ahead;
  return shape;
}

Result<StageCosts> CandidateEvaluator::costs(const PipelineCandidate& candidate) const {
  for (std::size_t s = 0; s < candidate.placement.size(); ++s)
    if (candidate.placement[s] < 0 || candidate.placement[s] >= source_.devices())
      return make_error("pipeline candidate: stage " + std::to_string(s) + " is placed on device " +
                        std::to_string(candidate.placement[s]) + " of " + std::to_string(source_.devices()));
  // Most moves keep the partition, placement and recomputation (rules, orders, depths), so their
  // costs repeat: kept, not recomputed.
  PipelineScheme scheme = shape(candidate);
  CostsKey key{scheme.partition, scheme.placement, scheme.recompute, scheme.offload};
  if (auto known = costs_cache_.find(key); known != costs_cache_.end()) return known->second;
  auto computed = source_.costs_of(scheme, kCandidateSource);
  if (!computed) return computed.error();
  if (costs_cache_.size() >= kMaxCosts) costs_cache_.clear();  // structures the search left
  costs_cache_.emplace(std::move(key), computed.value());
  return computed;
}

Result<std::pair<PipelineScheme, StageCosts>> CandidateEvaluator::build(const PipelineCandidate& candidate) const {
  auto costs = this->costs(candidate);
  if (!costs) return costs.error();
  if (!candidate.order.empty()) {
    PipelineScheme scheme = shape(candidate);
    scheme.schedule = candidate.order;
    return std::pair{std::move(scheme), std::move(costs).value()};
  }
  auto scheme = pipeline_list_schedule(shape(candidate), costs.value(), candidate.rules);
  if (!scheme) return scheme.error();
  return std::pair{std::move(scheme).value(), std::move(costs).value()};
}

std::size_t CandidateEvaluator::CandidateHash::operator()(const PipelineCandidate& c) const {
  Fnv f;
  for (auto [first, end] : c.partition) {
    f.add(first);
    f.add(end);
  }
  for (int d : c.placement) f.add(d);
  for (int l : c.rules.in_flight_limit) f.add(l);
  f.add(c.rules.f_before_b | c.rules.split_backward << 1 | c.rules.delay_w << 2 | c.rules.respect_memory << 3 |
        static_cast<int>(c.rules.reserve) << 4);
  for (int s : c.recompute) f.add(s);
  for (double x : c.offload) f.add(std::llround(x * 1e6));
  if (!c.offload.empty()) f.add(c.reload_ahead);
  for (const auto& list : c.order) {
    f.add(-1);  // device separator
    for (const PipeTask& t : list) f.add(static_cast<long long>(t.op) | static_cast<long long>(t.microbatch) << 8 |
                                         static_cast<long long>(t.stage) << 36);
  }
  return f.h;
}

Result<CandidateResult> CandidateEvaluator::evaluate(const PipelineCandidate& candidate, bool with_starts) {
  const bool rememberable = !with_starts && order_tasks(candidate) <= kMaxRememberedTasks;
  if (rememberable) {
    if (auto known = results_.find(candidate); known != results_.end()) {
      ++evaluations_;
      return known->second;
    }
  }
  auto r = simulate(candidate, with_starts);
  if (!r) return r;
  ++evaluations_;
  ++simulations_;
  if (rememberable) {
    const std::size_t bytes = remembered_bytes(candidate, r.value());
    if (remembered_bytes_ + bytes > kMaxRememberedBytes) {  // schemes the search left long ago
      results_.clear();
      remembered_bytes_ = 0;
    }
    results_.emplace(candidate, r.value());
    remembered_bytes_ += bytes;
  }
  return r;
}

Result<CandidateResult> CandidateEvaluator::simulate(const PipelineCandidate& candidate, bool with_starts) {
  auto built = build(candidate);
  if (!built) return built.error();
  const auto& [scheme, costs] = built.value();
  // The structure is the placement and whether backward passes are split, as the scheme has them
  // (an explicit order may differ from what its rules would build).
  bool split = true;
  for (const auto& list : scheme.schedule)
    for (const PipeTask& t : list) split = split && t.op != PipeOp::BW;
  std::pair<std::vector<int>, bool> key{candidate.placement, split};
  if (compiled_.size() >= kMaxCompiled && compiled_.count(key) == 0) compiled_.clear();  // placements the search left
  auto& compiled = compiled_[std::move(key)];
  if (!compiled) {
    auto e = PipelineEvaluator::compile(scheme);
    if (!e) return e.error();
    compiled = std::make_unique<PipelineEvaluator>(std::move(e).value());
  }
  compiled->set_record_starts(with_starts);
  auto ok = compiled->evaluate(scheme, costs, links_, scratch_);
  if (!ok) return ok.error();
  CandidateResult r;
  r.evaluation = scratch_;
  r.iteration_time = scratch_.feasible() ? scratch_.iteration_time : std::numeric_limits<double>::infinity();
  return r;
}

namespace {

// (most loaded device, sum of squared device loads) of a candidate's costs. With `microbatches`
// > 0 a device's load is that many microbatches' work plus when its first task can start (the
// first microbatch's F through the stages before its entry stage, and their hand-offs).
std::pair<double, double> device_load_key(const StageCosts& costs, const std::vector<int>& placement, int devices,
                                          int microbatches = 0) {
  std::vector<double> load(devices, 0.0);
  for (int s = 0; s < costs.num_stages(); ++s) load[placement[s]] += costs.f[s] + costs.b[s] + costs.w[s];
  std::vector<double> delay(devices, -1.0);
  if (microbatches > 0) {
    double reached = 0;
    for (int s = 0; s < costs.num_stages(); ++s) {
      if (delay[placement[s]] < 0) delay[placement[s]] = reached;
      reached += costs.f[s] + (s + 1 < costs.num_stages() && placement[s + 1] != placement[s] ? costs.comm[s] : 0.0);
    }
  }
  double top = 0, squares = 0;
  for (int d = 0; d < devices; ++d) {
    const double l = microbatches > 0 ? microbatches * load[d] + std::max(0.0, delay[d]) : load[d];
    top = std::max(top, l);
    squares += load[d] * load[d];
  }
  return {top, squares};
}

}  // namespace

bool shift_boundaries(Partition& partition, int k, int span, int direction) {
  const int stages = static_cast<int>(partition.size());
  if (k < 0 || span < 1 || k + span >= stages || (direction != -1 && direction != 1)) return false;
  for (int b = k; b < k + span; ++b) {
    partition[b].second += direction;
    partition[b + 1].first += direction;
  }
  for (int s = k; s <= k + span; ++s)
    if (partition[s].second <= partition[s].first) {
      for (int b = k; b < k + span; ++b) {  // undo
        partition[b].second -= direction;
        partition[b + 1].first -= direction;
      }
      return false;
    }
  return true;
}

PipelineCandidate balance_device_loads(const CandidateEvaluator& evaluator, PipelineCandidate c, int max_span,
                                       bool start_delays) {
  const int microbatches = start_delays ? evaluator.microbatches() : 0;
  const int devices = evaluator.source().devices(), stages = static_cast<int>(c.partition.size());
  auto costs = evaluator.costs(c);
  if (!costs || stages < 2) return c;
  auto key = device_load_key(costs.value(), c.placement, devices, microbatches);
  for (bool moved = true; moved;) {
    moved = false;
    PipelineCandidate best = c;
    for (int k = 0; k + 1 < stages; ++k)
      for (int span = 1; span <= max_span && k + span < stages; ++span)
        for (int direction : {-1, 1}) {
          PipelineCandidate m = c;
          if (!shift_boundaries(m.partition, k, span, direction)) continue;
          auto mc = evaluator.costs(m);
          if (!mc) continue;
          const auto mk = device_load_key(mc.value(), m.placement, devices, microbatches);
          if (mk.first < key.first * (1 - 1e-12) || (mk.first <= key.first && mk.second < key.second * (1 - 1e-12))) {
            key = mk;
            best = std::move(m);
            moved = true;
          }
        }
    c = std::move(best);
  }
  return c;
}

}  // namespace gantry
