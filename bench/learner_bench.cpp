#include "bench/learner_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>

#include "bench/median.hpp"
#include "core/cluster.hpp"
#include "core/cost_model.hpp"
#include "actors/embedded_job.hpp"
#include "learner/episode_source.hpp"
#include "storage/store.hpp"
#include "learner/learned_placement.hpp"
#include "learner/policy_model.hpp"
#include "learner/policy_runner.hpp"
#include "learner/trainer.hpp"
#include "sim/simulator.hpp"
#include "workloads/workload.hpp"

namespace gantry {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct BenchGraph {
  Graph graph;
  Cluster cluster;
  CostTable costs;
  SimOptions sim;
  explicit BenchGraph(int ops) : BenchGraph(workload_graph("random:costs=doppler,ops=" + std::to_string(ops), "--sizes")) {}
  explicit BenchGraph(Graph g) : graph(std::move(g)), cluster(Cluster::identical(4).value()), costs(graph, cluster) {
    sim.doppler = true;
  }
  // The graph of a workload spec, or an error naming the option it came from.
  static Graph workload_graph(const std::string& spec, const std::string& option) {
    auto g = make_workload(spec, 1);
    if (!g) throw std::runtime_error(option + " " + spec + ": " + g.error().message);
    return std::move(g).value();
  }
};

RolloutBenchRow bench_rollouts(const PolicyWeights& weights, int ops, const LearnerBenchOptions& o) {
  BenchGraph g(ops);
  const TrainingProblem problem = make_training_problem("bench", g.graph, g.cluster, g.costs, g.sim);
  RolloutBenchRow row;
  row.ops = g.graph.size();
  row.edges = g.graph.num_edges();
  std::vector<double> encoder, episode;
  PlacementEnv env(g.graph, g.costs, problem.features);
  Simulator sim(g.graph, g.costs, g.cluster, g.sim);
  std::mt19937_64 rng(1);
  double candidates = 0, steps = 0;
  const auto begin = Clock::now();
  while (since(begin) < o.seconds_per_size || episode.size() < 3) {
    auto t0 = Clock::now();
    PolicyRunner runner(weights, problem.features, g.graph);
    encoder.push_back(since(t0));
    for (int i = 0; i < o.batch && (since(begin) < o.seconds_per_size || episode.size() < 3); ++i) {
      t0 = Clock::now();
      const Episode ep = run_episode(runner, env, sim, RolloutOptions{}, rng);
      episode.push_back(since(t0));
      candidates += static_cast<double>(ep.candidates.size());
      steps += static_cast<double>(ep.ops.size());
    }
  }
  row.encoder_ms = 1e3 * median(encoder);
  row.episode_ms = 1e3 * median(episode);
  row.episodes_per_second = 1.0 / (median(episode) + median(encoder) / o.batch);
  row.us_per_op = 1e6 * median(episode) / row.ops;
  row.candidates_per_step = candidates / steps;
  return row;
}

}  // namespace

LearnerBenchResult run_learner_bench(const LearnerBenchOptions& o) {
  set_training_threads(1);
  const BenchGraph train_graph(BenchGraph::workload_graph(o.train_workload, "--train-workload"));  // refused before the rest runs
  PolicyModel model(PolicyConfig{}, 1);
  const PolicyWeights weights = model.weights();
  LearnerBenchResult result;
  for (int ops : o.sizes) result.rollouts.push_back(bench_rollouts(weights, ops, o));

  {
    BenchGraph g(300);
    const PlacementProblem problem{g.graph, g.cluster, g.costs, g.sim};
    std::vector<double> times;
    for (int i = 0; i < 20; ++i) {
      const auto t0 = Clock::now();
      (void)place_with_policy(weights, problem);
      times.push_back(since(t0));
    }
    result.greedy_ops = g.graph.size();
    result.greedy_ms = 1e3 * median(times);
  }

  // As `gantry train` runs: a learner job on the embedded cluster, episodes through its rollout pool.
  JobSpec spec;
  spec.kind = "train";
  spec.problem = make_problem_spec(train_graph.graph, train_graph.cluster, train_graph.sim, "bench");
  spec.budget_seconds = o.train_seconds;
  spec.train.stage = "sim";
  spec.train.batch = o.batch;
  spec.train.learning_rate = 1e-3;
  char dir[] = "/tmp/gantry-bench-learner-XXXXXX";
  if (!mkdtemp(dir)) return result;
  std::optional<LearnerReport> report;
  EmbeddedJobOptions job;
  job.rollouts = o.threads;
  job.hooks.on_learned = [&](const LearnerReport& r) { report = r; };
  auto opened = Store::open(std::string(dir) + "/db");
  if (opened) (void)run_embedded_job(std::move(opened).value(), spec, job);
  std::filesystem::remove_all(dir);
  result.train_ops = train_graph.graph.size();
  if (report) {
    result.train_episodes = report->episodes;
    result.train_seconds = report->seconds;
    result.train_episodes_per_second = report->episodes / std::max(1e-9, report->seconds);
    result.learner_busy = report->learner_seconds / std::max(1e-9, report->seconds);
  }
  return result;
}

}  // namespace gantry
