#pragma once
// What the pipeline verbs (simulate, compare, tune) share: their flags, and the stage costs those
// flags describe (a catalog model, a Hugging Face config or a per-stage cost file).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/pipeline_problem.hpp"
#include "cli/cli_common.hpp"
#include "core/fingerprint.hpp"
#include "core/pipeline_scheme.hpp"
#include "sim/pipeline_simulation.hpp"
#include "sim/sim_options.hpp"
#include "tuner/pipeline/stage_source.hpp"

namespace gantry::cli {

struct PipelineArgs {
  std::string stages_file, schedule = "1f1b", mem_limit;
  std::string model, hf_config, cluster = "8xH100-nvswitch", partition = "compute", profile;
  std::string efficiency, scheme_file, save_scheme;
  int microbatches = 0, pp = 0;
  bool microbatches_given = false, pp_given = false;
  std::int64_t microbatch_size = 1, seq = 4096;
  std::vector<std::string> schedules = {"gpipe", "1f1b", "interleaved:2", "zb", "zbv"};
  OutputArgs out;
  std::string links = "contention";
};

// --trace / --svg of a simulated scheme (a result simulated with its timeline), titled `title`.
void write_pipeline_timeline(const OutputArgs& out, const std::string& title, const PipelineResult& result);

// "80GiB", "512MiB", "8e10": a memory size > 0.
double parse_bytes(const std::string& text);

// The problem the flags name, with the files they name read in (errors are CliErrors).
PipelineProblemSpec pipeline_problem(const PipelineArgs& args);
// Its stage costs with args.partition; `scheme` (or null) gives the pipeline degree and
// microbatches when the flags do not.
PipelineSource pipeline_source(const PipelineArgs& args, const PipelineScheme* scheme);

// Flags are checked before any file is read: a bad value is named, never replaced by a default.
void check_flags(const PipelineArgs& args);

// The model, cluster and cost flags every pipeline verb takes.
void add_pipeline_options(CLI::App& cmd, PipelineArgs& args);
// Those without --cluster, --partition and --links (for verbs that have their own, like query).
void add_pipeline_model_options(CLI::App& cmd, PipelineArgs& args);
// Whether the flags name a pipeline problem (--model, --hf-config or --stages).
bool names_pipeline(const PipelineArgs& args);
// Which numbers were given on the command line (a given 0 or -5 is an error, not the default).
void note_given(CLI::App& cmd, PipelineArgs& args);

// `gantry pipeline tune` (pipeline_tune_command.cpp), registered under `gantry pipeline`.
void add_pipeline_tune_command(CLI::App& pipeline);

}  // namespace gantry::cli
