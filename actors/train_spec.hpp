#pragma once
// A learner job's settings (JobSpec kind "train"): what `gantry train` and `gantry tune --method
// doppler` ask for, as plain values, so the job can be queued, stored, sent to a coordinator and
// rerun after a restart. The job's first graph is JobSpec::problem, the others are here; the time
// budget and seed are the JobSpec's.
#include <cstdint>
#include <string>
#include <vector>

#include "actors/problem_spec.hpp"

namespace gantry {

struct TrainSpec {
  std::vector<ProblemSpec> more_problems;  // graphs after the first (one policy learns on all)
  std::string stage = "il+sim";            // il, sim, il+sim or real (stage III: measured makespans)
  long episodes = 0;                       // all stages (0 = the time budget only)
  double il_share = 0.2;                   // il+sim: imitation's share of the budget
  std::string name = "doppler";            // the stored policy's name
  // Where the policy starts: "" (new weights), "builtin" (the shipped policy) or NAME[:VERSION] of
  // the store of whoever runs the job; a policy file is sent as its bytes (hex) instead.
  std::string init;
  std::string init_hex;
  std::string init_label;                  // names init_hex (the file) in the stored record
  std::string ablation = "dual";           // dual, plc-only, random-sel, gdp
  int hidden = 64, head = 64, state = 16, steps = 3;  // a new policy's shape
  int batch = 8, graphs_per_update = 4;
  double learning_rate = 0, entropy = 1e-3, epsilon = 0;
  std::string imitate = "ties";            // ties or pick
  int max_staleness = 2;
  std::string stale = "weight";            // drop or weight
  long progress_every = 0;                 // 0: about every 10 updates
  // Stage III: the share of episodes measured for real; the rest are simulated on the workers
  // (actors/mixed_episode_source.hpp). 1 = every episode measured.
  double measured_share = 1;
};

}  // namespace gantry
