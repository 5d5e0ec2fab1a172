#pragma once
// `gantry bench learner`: how fast DOPPLER policies run and train on 2 cores.
//   rollouts: per graph size (random DAGs, DOPPLER costs, 4 devices), the encoder pass, the
//     median episode (SEL + PLC + environment + simulation) and episodes/s per core with one
//     encoder pass per batch of episodes, the time per op (episode time linear in size) and the
//     mean candidates SEL scores per step (the window of at most kCandidateWindow ready ops: a
//     step costs more while the window fills, up to a few thousand ops on these graphs);
//   greedy: one `place --method doppler` episode (encoder included) on a 300-op graph;
//   learner: trained episodes per second of gantry train end to end (episodes through the
//     embedded cluster's rollout pool while the learner trains) on a workload (a 200-op random
//     graph by default; the learner's cost grows with the candidates per step, e.g. llama-block).
#include <string>
#include <vector>

namespace gantry {

struct RolloutBenchRow {
  int ops = 0, edges = 0;
  double encoder_ms = 0;
  double episode_ms = 0;           // median over the episodes run
  double episodes_per_second = 0;  // one core, one encoder pass per `batch` episodes
  double us_per_op = 0;            // median episode time / ops
  double candidates_per_step = 0;  // mean over the episodes run
};

struct LearnerBenchResult {
  std::vector<RolloutBenchRow> rollouts;
  int greedy_ops = 0;
  double greedy_ms = 0;  // median
  int train_ops = 0;
  double train_episodes_per_second = 0;
  double train_seconds = 0;
  long train_episodes = 0;
  double learner_busy = 0;  // share of the run the learner spent in updates
};

struct LearnerBenchOptions {
  std::vector<int> sizes = {200, 1000, 5000, 20000};
  int batch = 16;             // episodes per encoder pass (as gantry train's --batch)
  double seconds_per_size = 2;
  double train_seconds = 10;
  int threads = 1;            // rollout threads of the training run
  std::string train_workload = "random:costs=doppler,ops=200";  // the training run's graph (4 devices)
};

LearnerBenchResult run_learner_bench(const LearnerBenchOptions& options);

}  // namespace gantry
