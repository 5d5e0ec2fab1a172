#include "actors/pipeline_moves_task.hpp"

#include <cmath>
#include <limits>

#include "actors/net/msgpack_fields.hpp"
#include "actors/problem_spec.hpp"
#include "actors/task_kinds.hpp"

namespace gantry {

namespace {

using wire::Decoder;
using wire::entry;
using wire::get;
using wire::Writer;

constexpr std::int64_t kMaxIndex = 1 << 24;  // layers, stages, devices, microbatches: a peer's claim is checked

void put_ints(Writer& w, const std::vector<int>& values) {
  w.array(static_cast<std::uint32_t>(values.size()));
  for (int v : values) w.sint(v);
}

void put_reals(Writer& w, const std::vector<double>& values) {
  w.array(static_cast<std::uint32_t>(values.size()));
  for (double v : values) w.real(v);
}

const char* get_ints(Decoder& d, std::vector<int>& out) {
  return wire::get_list(d, out, [&](int& v) -> const char* {
    std::int64_t x = 0;
    if (!d.in.sint(x) || x < -1 || x > kMaxIndex) return "holds something that is not an index";
    v = static_cast<int>(x);
    return nullptr;
  });
}

const char* get_reals(Decoder& d, std::vector<double>& out) {
  return wire::get_list(d, out, [&](double& v) { return d.in.real(v) ? nullptr : "holds something that is not a number"; });
}

// Rule flags as one integer: bit 0 F before B, 1 split backward, 2 delay W, 3 respect memory,
// 4 an entry F reserves for the new microbatch only (MemoryReserve::newcomer), 5 for the held
// ones only (held); neither: for all.
int rule_flags(const ListScheduleRules& r) {
  return (r.f_before_b ? 1 : 0) | (r.split_backward ? 2 : 0) | (r.delay_w ? 4 : 0) | (r.respect_memory ? 8 : 0) |
         (r.reserve == MemoryReserve::newcomer ? 16 : 0) | (r.reserve == MemoryReserve::held ? 32 : 0);
}

void put_candidate(Writer& w, const PipelineCandidate& c) {
  w.map(5 + !c.recompute.empty() + 2 * !c.offload.empty());
  w.str("partition");  // first, end of each stage, flattened
  w.array(static_cast<std::uint32_t>(2 * c.partition.size()));
  for (auto [first, end] : c.partition) {
    w.sint(first);
    w.sint(end);
  }
  w.str("placement");
  put_ints(w, c.placement);
  w.str("limits");
  put_ints(w, c.rules.in_flight_limit);
  entry(w, "flags", rule_flags(c.rules));
  w.str("order");  // per device: op, microbatch, stage of each task, flattened
  w.array(static_cast<std::uint32_t>(c.order.size()));
  for (const auto& tasks : c.order) {
    w.array(static_cast<std::uint32_t>(3 * tasks.size()));
    for (const PipeTask& t : tasks) {
      w.sint(static_cast<int>(t.op));
      w.sint(t.microbatch);
      w.sint(t.stage);
    }
  }
  if (!c.recompute.empty()) {
    w.str("recompute");
    put_ints(w, c.recompute);
  }
  if (!c.offload.empty()) {
    w.str("offload");
    put_reals(w, c.offload);
    entry(w, "reload_ahead", c.reload_ahead);
  }
}

const char* const kCandidateFields[] = {"partition", "placement", "limits", "flags", "order",
                                        "recompute", "offload", "reload_ahead"};
constexpr std::size_t kRequiredCandidateFields = 5;  // the rest are optional

bool read_candidate(Decoder& d, const std::string& what, PipelineCandidate& c) {
  const bool read = wire::read_object(d, what, kCandidateFields, [&](std::string_view key) -> const char* {
    if (key == "partition") {
      std::vector<int> flat;
      if (const char* problem = get_ints(d, flat)) return problem;
      if (flat.size() % 2) return "has an odd length (first, end pairs)";
      for (std::size_t i = 0; i < flat.size(); i += 2) c.partition.emplace_back(flat[i], flat[i + 1]);
      return nullptr;
    }
    if (key == "placement") return get_ints(d, c.placement);
    if (key == "recompute") return get_ints(d, c.recompute);
    if (key == "offload") return get_reals(d, c.offload);
    if (key == "reload_ahead") {
      if (const char* problem = get(d, c.reload_ahead)) return problem;
      return c.reload_ahead >= 1 && c.reload_ahead <= kReloadAheadLimit ? nullptr : "is not a task count from 1 to 2^20";
    }
    if (key == "limits") return get_ints(d, c.rules.in_flight_limit);
    if (key == "flags") {
      int flags = 0;
      if (const char* problem = get(d, flags)) return problem;
      if (flags & ~63) return "holds a rule this version does not know (bits above 5)";
      if ((flags & 48) == 48) return "reserves for the new microbatch only and for the held ones only (bits 4 and 5)";
      c.rules.f_before_b = flags & 1;
      c.rules.split_backward = flags & 2;
      c.rules.delay_w = flags & 4;
      c.rules.respect_memory = flags & 8;
      c.rules.reserve = flags & 16 ? MemoryReserve::newcomer : flags & 32 ? MemoryReserve::held : MemoryReserve::all;
      return nullptr;
    }
    return wire::get_list(d, c.order, [&](std::vector<PipeTask>& tasks) -> const char* {
      std::vector<int> flat;
      if (const char* problem = get_ints(d, flat)) return problem;
      if (flat.size() % 3) return "holds a device whose tasks are not (op, microbatch, stage) triples";
      for (std::size_t i = 0; i < flat.size(); i += 3) {
        if (flat[i] < 0 || flat[i] > static_cast<int>(PipeOp::BW)) return "holds an unknown task kind";
        tasks.push_back(PipeTask{static_cast<PipeOp>(flat[i]), flat[i + 1], flat[i + 2]});
      }
      return nullptr;
    });
  }, kRequiredCandidateFields);
  if (!read) return false;
  if (Status ok = normalize_recompute(c.recompute, static_cast<int>(c.placement.size()), what + ": recompute"); !ok) {
    d.error = ok.error().message;
    return false;
  }
  if (Status ok = normalize_offload(c.offload, static_cast<int>(c.placement.size()), what + ": offload"); !ok) {
    d.error = ok.error().message;
    return false;
  }
  return true;
}

void put_result(Writer& w, const MoveResult& m) {
  if (!m.ok) {
    w.map(1);
    entry(w, "error", m.error);
    return;
  }
  const PipelineEvaluation& e = m.result.evaluation;
  w.map(6);
  entry(w, "completed", e.completed);
  entry(w, "out_of_memory", e.out_of_memory);
  entry(w, "iteration_time", e.iteration_time);
  entry(w, "bubble_ratio", e.bubble_ratio);
  w.str("busy");
  put_reals(w, e.busy);
  w.str("peak_memory");
  put_reals(w, e.peak_memory);
}

const char* const kResultFields[] = {"completed", "out_of_memory", "iteration_time", "bubble_ratio", "busy",
                                     "peak_memory", "error"};

bool read_result(Decoder& d, const std::string& what, MoveResult& m) {
  bool has_error = false;
  const bool read = wire::read_object(d, what, kResultFields, [&](std::string_view key) -> const char* {
    PipelineEvaluation& e = m.result.evaluation;
    if (key == "error") {
      has_error = true;
      return get(d, m.error);
    }
    if (key == "completed") return get(d, e.completed);
    if (key == "out_of_memory") return get(d, e.out_of_memory);
    if (key == "iteration_time") return get(d, e.iteration_time);
    if (key == "bubble_ratio") return get(d, e.bubble_ratio);
    if (key == "busy") return get_reals(d, e.busy);
    return get_reals(d, e.peak_memory);
  }, 0);
  if (!read) return false;
  m.ok = !has_error;
  if (m.ok) {
    const PipelineEvaluation& e = m.result.evaluation;
    // The tuner's rule (CandidateEvaluator::evaluate): what deadlocks or does not fit is infinitely slow.
    m.result.iteration_time = e.feasible() ? e.iteration_time : std::numeric_limits<double>::infinity();
  }
  return true;
}

// A slot's evaluator of the problem it last served (structures compiled once, reused by later tasks).
struct MovesScratch : SlotScratch {
  std::shared_ptr<const BuiltProblem> problem;
  std::unique_ptr<CandidateEvaluator> evaluator;
};

}  // namespace

namespace {

// A list of values as a MessagePack array, each written by `put`.
template <class T, class Put>
std::string encode_list(const std::vector<T>& items, Put put) {
  Writer w;
  w.array(static_cast<std::uint32_t>(items.size()));
  for (const T& item : items) put(w, item);
  return w.take();
}

// An array of values, each read by `read(decoder, path, value)`; errors name `what[index]`.
template <class T, class Read>
Result<std::vector<T>> decode_list(std::string_view body, const std::string& what, Read read) {
  return wire::read_value<std::vector<T>>(body, what, [&](Decoder& d, const std::string& path, std::vector<T>& out) {
    long index = 0;
    const char* problem = wire::get_list(d, out, [&](T& item) -> const char* {
      return wire::nested(d, [&] { return read(d, path + "[" + std::to_string(index++) + "]", item); });
    });
    if (problem && problem != wire::kNested) d.error = path + ": " + problem;
    return problem == nullptr;
  });
}

}  // namespace

std::string encode_body(const std::vector<PipelineCandidate>& candidates) { return encode_list(candidates, put_candidate); }

Result<std::vector<PipelineCandidate>> decode_pipeline_moves(std::string_view body) {
  return decode_list<PipelineCandidate>(body, "pipeline moves", read_candidate);
}

std::string encode_body(const std::vector<MoveResult>& results) { return encode_list(results, put_result); }

Result<std::vector<MoveResult>> decode_move_results(std::string_view body) {
  return decode_list<MoveResult>(body, "pipeline move results", read_result);
}

Result<std::string> run_pipeline_moves_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                            std::unique_ptr<SlotScratch>& scratch) {
  if (!problem->pipeline) return make_error("a pipeline-moves task needs a pipeline problem");
  auto moves = decode_pipeline_moves(task.body);
  if (!moves) return moves.error();
  auto* kept = dynamic_cast<MovesScratch*>(scratch.get());
  if (!kept || kept->problem != problem) {
    auto fresh = std::make_unique<MovesScratch>();
    fresh->problem = problem;
    const PipelineSource& source = *problem->pipeline;
    fresh->evaluator = std::make_unique<CandidateEvaluator>(*source.stages, source.microbatches, source.links);
    kept = fresh.get();
    scratch = std::move(fresh);
  }
  std::vector<MoveResult> results;
  results.reserve(moves.value().size());
  for (const PipelineCandidate& c : moves.value()) {
    MoveResult m;
    auto r = kept->evaluator->evaluate(c);
    m.ok = static_cast<bool>(r);
    if (r) m.result = std::move(r).value();
    else m.error = r.error().message;
    results.push_back(std::move(m));
  }
  return encode_body(results);
}

}  // namespace gantry
