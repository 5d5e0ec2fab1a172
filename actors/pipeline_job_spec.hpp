#pragma once
// A pipeline tuning job's settings (JobSpec kind "pipeline"): how the co-tuner searches. The
// problem is JobSpec::problem (a pipeline problem), the time and evaluation budgets and the
// priority are the JobSpec's.
namespace gantry {

struct PipelineJobSpec {
  int max_chunks = 4;       // virtual stages per device the placement phase tries
  double min_gain = 0.001;  // a pass gaining less (relative) ends the tuning
  int max_passes = 20;
  double walk_share = 1.0;  // the annealing walk after the descents and kicks, as a share of their evaluations (0: none)
  double kick_share = 2.0;  // the kicks after the descents, as a share of their evaluations (0: none)
};

}  // namespace gantry
