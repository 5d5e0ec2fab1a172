#include "learner/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "sim/simulator.hpp"

namespace gantry {

const char* to_string(Stage stage) {
  return stage == Stage::imitation ? "il" : stage == Stage::reinforce ? "sim" : "real";
}

namespace {

using Clock = std::chrono::steady_clock;
// After the budget, batches still out are waited for (their placements may hold the best) while
// one comes at least this often, or twice as often as the longest batch took to roll out (large
// graphs: one batch can take many seconds).
constexpr double kDrainSeconds = 2;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Scale-free rewards (-makespan / teacher makespan) of one graph's batch, minus their mean and
// divided by their spread; a batch whose episodes all scored the same teaches nothing.
std::vector<double> advantages(const EpisodeBatch& batch, double teacher) {
  std::vector<double> r;
  for (const Episode& e : batch.episodes) r.push_back(-e.makespan / teacher);
  double mean = 0, var = 0;
  for (double x : r) mean += x;
  mean /= static_cast<double>(r.size());
  for (double x : r) var += (x - mean) * (x - mean);
  const double sd = std::sqrt(var / static_cast<double>(r.size()));
  for (double& x : r) x = sd > 1e-12 ? (x - mean) / sd : 0.0;
  return r;
}

// Running statistics of the episodes between two curve points.
struct Window {
  long episodes = 0;
  double ratio = 0;
  long matches = 0, decisions = 0;
  void add(const Episode& e, double teacher, bool has_sel) {
    ++episodes;
    ratio += e.makespan / teacher;
    matches += e.plc_matches + (has_sel ? e.sel_matches : 0);
    decisions += static_cast<long>(e.steps()) * (has_sel ? 2 : 1);
  }
};

}  // namespace

Result<Episode> greedy_episode(const PolicyWeights& weights, const TrainingProblem& problem) {
  EpisodeRequest request;
  request.weights = std::make_shared<const PolicyWeights>(weights);
  request.options.actor = Actor::greedy;
  auto batch = run_episode_request(problem, request);
  if (!batch) return batch.error();
  return std::move(batch.value().episodes.front());
}

Result<TrainResult> train(PolicyModel& model, const std::vector<TrainingProblem>& problems, EpisodeSource& source,
                          const TrainOptions& options, const TrainHooks& hooks) {
  if (problems.empty()) return make_error("training needs at least one graph");
  if (options.episodes <= 0 && options.seconds <= 0) return make_error("training needs an episode count or a time budget");
  const auto begin = Clock::now();
  const bool imitation = options.stage == Stage::imitation;
  const bool has_sel = model.config().ablation == Ablation::dual;
  const double lr0 = options.learning_rate > 0 ? options.learning_rate : imitation ? 1e-3 : 3e-4;
  const Objective objective{imitation ? 1.0 : 0.0, imitation ? 0.0 : 1.0, options.entropy, options.clip, options.imitate_ties};
  const int per_update = std::max(1, std::min<int>(options.graphs_per_update, static_cast<int>(problems.size())));

  TrainResult result;
  for (const TrainingProblem& p : problems)
    result.problems.push_back(ProblemOutcome{p.label, p.teacher_makespan, std::numeric_limits<double>::infinity(), {}, 0, 0});

  std::uint64_t version = 0;
  auto weights = std::make_shared<const PolicyWeights>(model.weights());
  long received = 0, next_point = options.progress_every;
  double longest_batch = 0;  // seconds one batch took to roll out
  // Where the stage stands, from 0 to 1, counting what a resumed stage did before this run.
  const double before = std::clamp(options.progress_before, 0.0, 1.0);
  double teacher_mix = imitation ? options.teacher_mix * (1.0 - before) : 0.0;
  auto last_checkpoint = begin;
  double last_entropy = 0, last_loss = 0;
  Window window;
  double window_start = 0;
  int in_flight = 0, next_problem = 0;
  std::uint64_t request_seed = options.seed * 1000003;
  std::vector<EpisodeBatch> ready;

  auto fraction_done = [&] {
    double f = 0;
    if (options.episodes > 0) f = std::max(f, static_cast<double>(received) / static_cast<double>(options.episodes));
    if (options.seconds > 0) f = std::max(f, seconds_since(begin) / options.seconds);
    return std::min(f, 1.0);
  };
  const auto stopped = [&] { return hooks.should_stop && hooks.should_stop(); };
  auto finished = [&] { return fraction_done() >= 1.0 || stopped(); };
  // The next batch, or nullopt once waiting should end (no worker may be serving): when the run is
  // stopped or `give_up()` says so.
  const auto next_batch = [&](const auto& give_up) -> std::optional<Result<EpisodeBatch>> {
    for (;;) {
      if (auto got = source.next(0.1)) return got;
      if (stopped() || give_up()) return std::nullopt;
    }
  };
  // The best placement of each graph, priced by this process's simulator: a worker's claimed
  // makespan only says which episodes are worth pricing.
  std::vector<std::unique_ptr<Simulator>> simulators(problems.size());
  auto keep_best = [&](const EpisodeBatch& batch) {
    ProblemOutcome& out = result.problems[batch.problem];
    const TrainingProblem& p = problems[batch.problem];
    for (const Episode& e : batch.episodes) {
      ++out.episodes;
      if (!(e.makespan < out.best_makespan)) continue;
      if (!simulators[batch.problem]) simulators[batch.problem] = std::make_unique<Simulator>(*p.graph, *p.costs, *p.cluster, p.sim);
      Placement placement = replay_placement(p, e);
      const double makespan = simulators[batch.problem]->makespan(placement);
      if (makespan < out.best_makespan) {
        out.best_makespan = makespan;
        out.best = std::move(placement);
      }
    }
  };
  // A worker's batch is checked before anything indexes with it (its source sets problem and
  // version from the request; the episodes are the worker's).
  const Ablation ablation = model.config().ablation;
  auto check_batch = [&](const EpisodeBatch& batch) -> Status {
    if (batch.problem < 0 || batch.problem >= static_cast<int>(problems.size()))
      return make_error("a batch of episodes names graph " + std::to_string(batch.problem) + " of " + std::to_string(problems.size()));
    const TrainingProblem& p = problems[batch.problem];
    if (static_cast<int>(batch.episodes.size()) != options.batch)
      return make_error("a batch of episodes for " + p.label + " has " + std::to_string(batch.episodes.size()) +
                        " episodes, not " + std::to_string(options.batch));
    if (batch.version > version) return make_error("a batch of episodes claims a policy version newer than the learner's");
    for (const Episode& e : batch.episodes)
      if (Status ok = e.check(*p.graph, p.cluster->size(), ablation); !ok)
        return make_error("a batch of episodes for " + p.label + " is malformed: " + ok.error().message);
    return Ok{};
  };
  auto best_ratio = [&] {
    double sum = 0;
    for (std::size_t i = 0; i < problems.size(); ++i)
      sum += std::isfinite(result.problems[i].best_makespan) ? result.problems[i].best_makespan / problems[i].teacher_makespan : 1.0;
    return sum / static_cast<double>(problems.size());
  };

  while (!finished()) {
    while (in_flight < source.slots()) {
      EpisodeRequest request;
      request.problem = next_problem;
      next_problem = (next_problem + 1) % static_cast<int>(problems.size());
      request.version = version;
      request.weights = weights;
      request.count = options.batch;
      request.options.actor = Actor::sample;
      request.options.epsilon = imitation ? 0.0 : options.epsilon;
      request.options.teacher_mix = teacher_mix;
      request.seed = ++request_seed;
      source.submit(std::move(request));
      ++in_flight;
    }
    auto waited = next_batch(finished);  // the time budget ends a wait too
    if (!waited) break;
    --in_flight;
    Result<EpisodeBatch>& got = *waited;
    if (!got) return got.error();
    EpisodeBatch batch = std::move(got.value());
    if (Status ok = check_batch(batch); !ok) return ok.error();
    result.rollout_seconds += batch.seconds;
    longest_batch = std::max(longest_batch, batch.seconds);
    received += static_cast<long>(batch.episodes.size());
    if (hooks.on_batch) hooks.on_batch(batch);
    for (const Episode& e : batch.episodes) window.add(e, problems[batch.problem].teacher_makespan, has_sel);
    keep_best(batch);

    if (version - batch.version > static_cast<std::uint64_t>(options.max_staleness) && options.stale == StalePolicy::drop) {
      result.dropped += static_cast<long>(batch.episodes.size());
    } else {
      ready.push_back(std::move(batch));
    }
    if (static_cast<int>(ready.size()) >= per_update) {
      std::vector<GraphBatch> batches;
      for (const EpisodeBatch& b : ready) {
        const TrainingProblem& p = problems[b.problem];
        GraphBatch gb{p.graph, &p.features, {}, advantages(b, p.teacher_makespan)};
        for (const Episode& e : b.episodes) gb.episodes.push_back(&e);
        batches.push_back(std::move(gb));
        result.episodes += static_cast<long>(b.episodes.size());
      }
      const double f = before + (1.0 - before) * fraction_done();
      model.set_learning_rate(lr0 * (1.0 - (1.0 - options.final_lr_fraction) * f));
      const auto t0 = Clock::now();
      const LossReport report = model.update(batches, objective);
      result.learner_seconds += seconds_since(t0);
      last_entropy = report.entropy;
      last_loss = report.loss;
      ++result.updates;
      ++version;
      weights = std::make_shared<const PolicyWeights>(model.weights());
      ready.clear();
      if (imitation) teacher_mix = options.teacher_mix * (1.0 - f);
      if (hooks.on_checkpoint && seconds_since(last_checkpoint) >= options.checkpoint_seconds) {
        result.seconds = seconds_since(begin);
        hooks.on_checkpoint(result);
        last_checkpoint = Clock::now();
      }
    }
    if (options.progress_every > 0 && received >= next_point) {
      const double now = seconds_since(begin);
      CurvePoint point{received, now, version, window.ratio / std::max(1L, window.episodes), best_ratio(),
                       window.decisions ? static_cast<double>(window.matches) / window.decisions : 0.0,
                       last_entropy, last_loss, window.episodes / std::max(1e-9, now - window_start)};
      result.curve.push_back(point);
      if (hooks.on_progress) hooks.on_progress(point);
      window = Window{};
      window_start = now;
      while (next_point <= received) next_point += options.progress_every;
    }
  }
  // Batches still out were sampled by recent policies: their placements count, their gradients not.
  auto last_batch = Clock::now();
  const double drain_seconds = std::max(kDrainSeconds, 2 * longest_batch);
  const auto drain_over = [&] { return seconds_since(last_batch) > drain_seconds; };
  while (in_flight > 0) {
    auto waited = next_batch(drain_over);
    if (!waited) break;  // stopped, or none came for a while: the source withdraws what is still out
    last_batch = Clock::now();
    --in_flight;
    Result<EpisodeBatch>& got = *waited;
    if (got && check_batch(got.value())) keep_best(got.value());
  }
  for (std::size_t i = 0; i < problems.size(); ++i) {
    auto greedy = greedy_episode(*weights, problems[i]);
    if (!greedy) return greedy.error();
    ProblemOutcome& out = result.problems[i];
    out.greedy_makespan = greedy.value().makespan;
    if (out.greedy_makespan < out.best_makespan) {
      out.best_makespan = out.greedy_makespan;
      out.best = replay_placement(problems[i], greedy.value());
    }
  }
  result.seconds = seconds_since(begin);
  return result;
}

}  // namespace gantry
