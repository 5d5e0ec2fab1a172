#pragma once
// What a learner job needs to go on after its process died: written to the store's checkpoints
// family under the job's id while it trains, read back when a restarted coordinator reruns the
// job, dropped when the job ends. It holds the policy's weights, where in the stage plan the job
// was, and each graph's best so far. Not the optimiser's moments: a resumed stage starts them afresh
// (its learning rate and teacher mix go on from where the stage was).
#include <string>
#include <string_view>
#include <vector>

#include "core/placement.hpp"
#include "core/result.hpp"

namespace gantry {

struct LearnerCheckpoint {
  int stage = 0;              // index in the job's stage plan of the stage in progress (= count: all done)
  long stage_episodes = 0;    // of that stage, episodes received
  double stage_seconds = 0;   // of that stage, seconds trained
  long episodes = 0, batches = 0;  // the job's totals so far
  double seconds = 0;
  bool measured_folded = false;  // il+sim+real without executors: stage II took stage III's share
  std::string weights;        // PolicyWeights::to_bytes
  std::vector<double> best_makespans;  // per graph of the job, in its order (+inf: none yet)
  std::vector<Placement> bests;
};

std::string encode_checkpoint(const LearnerCheckpoint& checkpoint);
// Errors name the field ("learner checkpoint.stage: ...").
Result<LearnerCheckpoint> decode_checkpoint(std::string_view bytes);

}  // namespace gantry
