#pragma once
// What the pipeline tuner searches over: a candidate is a partition of the layers into stages, a
// placement of the stages on devices and the list scheduler's rules that order each device's
// work. Evaluating one builds its costs (they follow the partition and placement), its orders and
// simulates them with the evaluator, compiled once per structure and reused.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/pipeline_scheme.hpp"
#include "sim/pipeline_evaluator.hpp"
#include "tuner/pipeline/list_scheduler.hpp"
#include "tuner/pipeline/stage_source.hpp"

namespace gantry {

struct PipelineCandidate {
  Partition partition;          // stage -> layers (empty for per-stage costs)
  std::vector<int> placement;   // stage -> device
  ListScheduleRules rules;
  // Explicit per-device orders (the tuner's task moves start from the list scheduler's and edit
  // them); empty: the list scheduler's orders under `rules`. Valid only for this placement.
  std::vector<std::vector<PipeTask>> order;
  // Stages that recompute their activations in B instead of holding them from F (sorted; for
  // models, whose costs know the sizes involved: recompute_stage).
  std::vector<int> recompute;
  // Per stage, the fraction of its activations offloaded to host memory between F and B, and how
  // many tasks ahead of a B its copy back is issued (PipelineScheme::offload; empty: none).
  std::vector<double> offload;
  int reload_ahead = 2;
  bool operator==(const PipelineCandidate& o) const;
};

// The earliest the searches issue a copy back: this many tasks ahead of its B.
constexpr int kMaxReloadAhead = 64;
// The most a candidate read from the store or the wire may ask for (more than any order holds).
constexpr int kReloadAheadLimit = 1 << 20;

// A candidate as JSON ({"partition", "placement", "in_flight_limit", "f_before_b",
// "split_backward", "delay_w", "respect_memory"}, "reserve" ("newcomer" or "held") when not all
// (newcomer also as "reserve_for_all": false, the older form, read when "reserve" is absent), and,
// when it has them, its explicit "order" as a
// scheme's schedule is written, its "recompute" stages and its "offload" fractions with
// "reload_ahead"), as the store keeps it to resume from, and back;
// errors name `source` and the field.
std::string candidate_to_json(const PipelineCandidate& candidate);
Result<PipelineCandidate> candidate_from_json(const std::string& text, const std::string& source);

// One line for people: stage count, layout (V, or non-contiguous when it is not a plain or V
// layout), the rules, the warm-up depths, and whether the task order was edited.
std::string describe_candidate(const PipelineCandidate& candidate, int devices);

// How many stages each of `devices` devices holds.
std::vector<int> stages_per_device(const PipelineCandidate& candidate, int devices);

// The rules a layout starts from: zero-bubble style (B and W split, W delayed, F first) with
// 1F1B's activation memory: p - d microbatches on device d for one stage per device, stages - 1
// chunk activations for several (ZB-V's 2p - 1 for two).
ListScheduleRules default_rules(const std::vector<int>& placement, int devices);

// A layout's candidate: `devices` x chunks stages (interleaved, or V for two chunks), the
// source's partition for them and default_rules.
Result<PipelineCandidate> layout_candidate(const StageSource& source, const StageLayout& layout);

struct CandidateResult {
  PipelineEvaluation evaluation;
  double iteration_time = 0;  // +inf when it deadlocks or does not fit
  bool feasible() const { return evaluation.feasible(); }
  // Faster; at an equal time (the critical path did not move), a lighter most-loaded device, then
  // evener loads: progress across the plateaus where single moves leave the time unchanged.
  bool better_than(const CandidateResult& other) const;
};

// Not for several threads at once, const calls included: it keeps compiled structures, stage
// costs and results as it goes (each worker slot and job thread has its own).
class CandidateEvaluator {
 public:
  CandidateEvaluator(const StageSource& source, int microbatches, LinkModel links = LinkModel::contention);

  // Costs, orders and the simulated result of `candidate`; an error when it is malformed (a
  // partition that does not cover the layers, a stage on no device...).
  // `with_starts`: the result carries every task's start time (PipelineEvaluation::start).
  Result<CandidateResult> evaluate(const PipelineCandidate& candidate, bool with_starts = false);
  // The stage costs of a candidate's partition and placement.
  Result<StageCosts> costs(const PipelineCandidate& candidate) const;
  // The scheme and costs of a candidate (what evaluate simulates).
  Result<std::pair<PipelineScheme, StageCosts>> build(const PipelineCandidate& candidate) const;

  // Candidates evaluated, repeats included (a search's count of what it asked, whether or not the
  // answer was remembered), and of those the ones simulated.
  std::int64_t evaluations() const { return evaluations_; }
  std::int64_t simulations() const { return simulations_; }
  int microbatches() const { return microbatches_; }
  LinkModel links() const { return links_; }
  const StageSource& source() const { return source_; }

 private:
  PipelineScheme shape(const PipelineCandidate& candidate) const;  // no orders yet
  Result<CandidateResult> simulate(const PipelineCandidate& candidate, bool with_starts);

  const StageSource& source_;
  int microbatches_;
  LinkModel links_;
  std::int64_t evaluations_ = 0, simulations_ = 0;
  // One compiled structure per (placement, split backward).
  std::map<std::pair<std::vector<int>, bool>, std::unique_ptr<PipelineEvaluator>> compiled_;
  // Stage costs per (partition, placement, recomputing stages, offload fractions).
  using CostsKey = std::tuple<Partition, std::vector<int>, std::vector<int>, std::vector<double>>;
  mutable std::map<CostsKey, StageCosts> costs_cache_;
  // Results of candidates evaluated before: searches revisit schemes (a kick undone by the descent
  // after it, an annealing step back), about a third of a tuning's evaluations on small models.
  struct CandidateHash {
    std::size_t operator()(const PipelineCandidate& c) const;
  };
  std::unordered_map<PipelineCandidate, CandidateResult, CandidateHash> results_;
  std::size_t remembered_bytes_ = 0;  // estimated
  PipelineEvaluation scratch_;
};

// Shifts the boundaries after stages k .. k + span - 1 (each between a stage and the next) by
// `direction` layers (-1: every stage of the chain hands its last layer on, so stage k loses one
// and stage k + span gains one; +1 the other way). False, leaving `partition` as it was, when a
// stage would be left empty or a boundary does not exist.
bool shift_boundaries(Partition& partition, int k, int span, int direction);

// `candidate` with its stage boundaries shifted (chains of up to `max_span` boundaries), until no shift lowers the
// most loaded device's F+B+W (then the sum of squared device loads): with several stages per
// device a device's load is the sum of its stages, which stage-level balance leaves uneven.
// Arithmetic on the costs only, no simulation. Per-stage costs (no partition) come back as given.
// With `start_delays` a device's load is the microbatches' work plus when its first task can
// start (the first microbatch's F and hand-offs through the stages before its entry stage): a
// device that starts late idles that long, so where whole layers leave one device the most work
// (falcon-mamba-7b: nine of 64 equal layers) it should be one that starts first.
PipelineCandidate balance_device_loads(const CandidateEvaluator& evaluator, PipelineCandidate candidate, int max_span,
                                       bool start_delays = false);

}  // namespace gantry
