#pragma once
// A pipeline problem as content: what a pipeline tuning job tunes (a model's layers or per-stage
// costs, the cluster, pipeline degree, microbatches, memory limit, links), as plain values with any
// file's text inline, so it crosses processes and is stored with its job. Every process builds the
// same stage costs from it: the command line (simulate, compare, tune), the job's tuner actor and
// the workers that evaluate its candidates.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/fingerprint.hpp"
#include "core/pipeline_scheme.hpp"
#include "core/result.hpp"
#include "sim/pipeline_simulation.hpp"
#include "sim/sim_options.hpp"
#include "tuner/pipeline/pipeline_candidate.hpp"
#include "tuner/pipeline/stage_source.hpp"

namespace gantry {

struct PipelineProblemSpec {
  // Exactly one of: a catalog model, a Hugging Face config.json's text, a stage-cost file's text.
  std::string model;
  std::string hf_config, hf_config_label;  // the label names the file in errors and listings
  std::string stages, stages_label;
  std::string cluster_yaml;                // the cluster (model problems)
  std::string profile, profile_label;      // measured operator times (a vidur mlp.csv's text), optional
  std::string efficiency;                  // "attention=0.5,mlp=0.65" (empty: defaults)
  std::string partition = "compute";       // uniform, params or compute: the source's own partition
  int pp = 0;                              // 0: every device of the cluster (or the scheme's)
  int microbatches = 0;                    // 0: 2 x pp, the file's n_micro (or the scheme's)
  std::int64_t seq = 4096, microbatch_size = 1;
  double mem_limit = 0;                    // bytes per device; 0: the devices' memory or max_mem
  std::string links = "contention";        // contention or unlimited
};

// JSON (docs/formats.md, "pipeline problem"); errors name `what` and the field.
std::string pipeline_problem_json(const PipelineProblemSpec& spec);
Result<PipelineProblemSpec> parse_pipeline_problem(const std::string& json, const std::string& what);

// The stage costs a problem describes, with what reports say about them.
struct PipelineSource {
  std::unique_ptr<StageSource> stages;
  int microbatches = 0;
  std::string microbatches_input;  // the flag or file field the count came from, for errors
  double tokens_per_microbatch = 0;
  std::vector<double> peak_flops;  // per pipeline device
  LinkModel links = LinkModel::contention;
  std::string description;
  bool has_layers = false;         // a model (partitions can change), not a stage file
  int layers = 0;                  // of a model
  // Where its best is stored: the problem (model or stage costs, pipeline degree, microbatches,
  // memory limit) and the runtime (cluster, links, pipeline model version).
  Fingerprint problem, runtime;
  std::string cluster_name;        // empty for a stage file
  std::string problem_label;       // the model or file, cluster and pipeline degree (no partition)
};

// `scheme` (or null) gives the pipeline degree and microbatches the spec leaves at 0;
// `scheme_label` names it in errors. Errors name the setting as the command line spells it.
Result<PipelineSource> build_pipeline_source(const PipelineProblemSpec& spec, const PipelineScheme* scheme = nullptr,
                                             const std::string& scheme_label = "");

// How a scheme of `source` is simulated in full: its links, tokens and device peaks; `record`
// keeps the timeline (traces, SVG).
PipelineRunInfo pipeline_run_info(const PipelineSource& source, bool record);

// The tuner's starting candidates: ZB-H1's and ZB-V's layouts on the compute-, parameter-balanced
// and uniform partitions (one partition for per-stage costs), so it never ends behind a
// zero-bubble baseline, and for models ZB-H1's layout on partitions that fit a share of its
// warm-up depth in memory (memory_fitting_candidates). Empty when no layout fits the layers.
Result<std::vector<PipelineCandidate>> pipeline_tuning_starts(const PipelineProblemSpec& spec);

// The lower bound of an iteration: every task's work spread evenly over the devices.
double pipeline_lower_bound(const StageCosts& costs, int microbatches, int devices);
// The lower bound of any scheme of `source` (without recomputation: its extra forward passes are
// a scheme's choice, not work the model needs): the work divided freely among the devices. A
// stage file fixes each device's work: the busiest device's. A model's layers may go anywhere, and on a
// cluster of mixed device kinds the fast ones should take more (divisible_work_bound); on
// identical devices that is work / devices too.
Result<double> pipeline_work_bound(const PipelineSource& source);

// A lower bound that knows layers are not divisible (models only; 0 for stage files): a device
// runs whole layers, each at least as long as on the fastest device, in at most
// `max_stages_per_device` runs of consecutive layers (0: any number): whole_layer_bound of those
// times, times the microbatches. When layers are coarse against a device's share it lies above
// work / devices (nemotron-h-8b on 8 devices, 32 microbatches: 1.5765 s against 1.525 s, and
// 1.593 s with at most 4 stages per device).
Result<double> pipeline_layer_bound(const PipelineSource& source, int max_stages_per_device = 0);

// Whether a model's static memory (each layer's parameters with their gradients, master weights
// and optimizer moments: StageCosts::static_memory) can fit its devices under any partition: in
// all within the devices' limits summed, and each layer within the largest. The error names the
// problem, what it needs and what the devices have, so that a tuning whose every scheme would run
// out of memory is refused at once with the reason. Stage files (no layers) and devices without
// a limit pass.
Status check_static_memory_fits(const PipelineSource& source);

}  // namespace gantry
