#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "learner/policy_model.hpp"
#include "learner/policy_runner.hpp"
#include "learner/rollout.hpp"
#include "core/graph.hpp"
#include "learner/trainer.hpp"
#include "tuner/placement_method.hpp"
#include "tests/learner/learner_fixture.hpp"

using namespace gantry;
using gantry::testing::tiny_policy;
using gantry::testing::LearnerProblem;

namespace {

std::vector<Episode> rollouts(PolicyModel& model, LearnerProblem& p, int count, RolloutOptions o, std::uint64_t seed) {
  const PolicyWeights w = model.weights();
  PolicyRunner runner(w, p.features, p.graph);
  std::mt19937_64 rng(seed);
  std::vector<Episode> out;
  for (int i = 0; i < count; ++i) out.push_back(run_episode(runner, p.env, p.sim, o, rng));
  return out;
}

GraphBatch batch_of(LearnerProblem& p, const std::vector<Episode>& eps, std::vector<double> adv = {}) {
  GraphBatch b{&p.graph, &p.features, {}, std::move(adv)};
  for (const Episode& e : eps) b.episodes.push_back(&e);
  if (b.advantages.empty()) b.advantages.assign(eps.size(), 0.0);
  return b;
}

// Imitation of the teacher (DAgger: half the steps the teacher's) until the greedy episode is
// `done` or `limit` updates have run; that greedy episode. The untrained one must not be done.
Episode imitate_until(LearnerProblem& p, const Objective& objective, int limit,
                      const std::function<bool(const Episode&)>& done) {
  PolicyConfig c;
  c.hidden = 16;
  c.head = 16;
  PolicyModel model(c, 1);
  model.set_learning_rate(3e-3);
  RolloutOptions greedy;
  greedy.actor = Actor::greedy;
  Episode e = rollouts(model, p, 1, greedy, 99).front();
  REQUIRE_FALSE(done(e));  // something to learn
  RolloutOptions o;
  o.teacher_mix = 0.5;
  int iterations = 0;
  while (iterations < limit && !done(e)) {
    for (int k = 0; k < 10; ++k, ++iterations) model.update({batch_of(p, rollouts(model, p, 4, o, iterations))}, objective);
    e = rollouts(model, p, 1, greedy, 99).front();
  }
  UNSCOPED_INFO("imitation updates: " << iterations);  // shown with the caller's next assertion
  return e;
}

}  // namespace

TEST_CASE("one update lowers the loss on a fixed batch", "[learner]") {
  LearnerProblem p("ffnn:costs=doppler,layers=2", 4);
  PolicyConfig c;
  c.hidden = 16;
  c.head = 16;
  for (Ablation a : {Ablation::dual, Ablation::plc_only, Ablation::gdp}) {
    INFO(to_string(a));
    c.ablation = a;
    c.devices = a == Ablation::gdp ? 4 : 0;
    PolicyModel model(c, 3);
    // Small enough that the first-order decrease of Adam's first step (-lr * sum g^2/|g|) dominates.
    model.set_learning_rate(1e-4);
    const std::vector<Episode> eps = rollouts(model, p, 4, RolloutOptions{}, 1);
    // Imitation: its loss falls.
    const std::vector<GraphBatch> batch{batch_of(p, eps)};
    const Objective imitation{1.0, 0, 0, 1.0};
    const double before = model.evaluate(batch, imitation).loss;
    model.update(batch, imitation);
    CHECK(model.evaluate(batch, imitation).loss < before);
    // Policy gradient with advantages of both signs: sum_e A_e log pi(episode e) rises.
    const std::vector<double> adv{1.0, -1.0, 0.5, -0.5};
    auto objective = [&] {
      double sum = 0;
      for (std::size_t e = 0; e < eps.size(); ++e)
        for (double lp : model.step_log_probs(p.graph, p.features, eps[e])) sum += adv[e] * lp;
      return sum;
    };
    model = PolicyModel(c, 3);  // a fresh optimizer: Adam's momentum would carry the imitation step
    model.set_learning_rate(1e-4);
    const double pg_before = objective();
    model.update({batch_of(p, eps, adv)}, Objective{0, 1.0, 0, 1.0});
    CHECK(objective() > pg_before);
  }
}

TEST_CASE("imitation on a tiny graph reaches a 100% teacher match", "[learner]") {
  LearnerProblem p("random:ops=24,seed=2,costs=doppler", 3);
  const Episode e = imitate_until(p, Objective{1.0, 0, 0, 1.0}, 400, [](const Episode& e) {
    return e.sel_matches == e.steps() && e.plc_matches == e.steps();
  });
  CHECK(e.sel_matches == e.steps());
  CHECK(e.plc_matches == e.steps());
}

namespace {

// Rollouts that always use the first policy they were given, as a worker far behind would: every
// batch says version 0.
class LaggingSource : public EpisodeSource {
 public:
  explicit LaggingSource(const std::vector<TrainingProblem>& problems) : problems_(problems) {}
  int slots() const override { return 1; }
  void submit(EpisodeRequest r) override {
    if (!first_) first_ = r.weights;
    r.weights = first_;
    r.version = 0;
    pending_.push_back(std::move(r));
  }
  std::optional<Result<EpisodeBatch>> next(double) override {
    EpisodeRequest r = std::move(pending_.front());
    pending_.erase(pending_.begin());
    return run_episode_request(problems_[r.problem], r);
  }

 private:
  const std::vector<TrainingProblem>& problems_;
  std::shared_ptr<const PolicyWeights> first_;
  std::vector<EpisodeRequest> pending_;
};

}  // namespace

TEST_CASE("stale batches are dropped or importance-weighted as configured", "[learner]") {
  LearnerProblem p("ffnn:costs=doppler,layers=2", 4);
  std::vector<TrainingProblem> problems{make_training_problem("ffnn", p.graph, p.cluster, p.costs, p.sim.options())};
  PolicyConfig c;
  c.hidden = 8;
  c.head = 8;
  TrainOptions o;
  o.episodes = 64;
  o.batch = 8;
  o.max_staleness = 1;
  auto run = [&](StalePolicy stale) {
    o.stale = stale;
    PolicyModel model(c, 1);
    LaggingSource source(problems);
    auto r = train(model, problems, source, o);
    REQUIRE(r.ok());
    return r.value();
  };
  const TrainResult dropped = run(StalePolicy::drop);
  // Versions 0 and 1 accept a version-0 batch (lag 0 and 1); from version 2 on every batch lags 2+.
  CHECK(dropped.updates == 2);
  CHECK(dropped.episodes == 16);
  CHECK(dropped.dropped == 48);
  const TrainResult weighted = run(StalePolicy::weight);
  CHECK(weighted.updates == 8);
  CHECK(weighted.dropped == 0);
}

TEST_CASE("a resumed stage's learning rate goes on decaying from where the stage was", "[learner]") {
  LearnerProblem p("ffnn:costs=doppler,layers=2", 4);
  std::vector<TrainingProblem> problems{make_training_problem("ffnn", p.graph, p.cluster, p.costs, p.sim.options())};
  TrainOptions o;
  o.stage = Stage::reinforce;
  o.episodes = 32;  // four updates of one batch of 8, at 1/4, 2/4, 3/4 and all of the run
  o.batch = 8;
  o.learning_rate = 1e-3;
  o.final_lr_fraction = 0.1;
  o.checkpoint_seconds = 0;  // the hook after every update sees the rate that update used
  auto first_rate = [&](double progress_before) {
    o.progress_before = progress_before;
    PolicyModel model(tiny_policy(), 1);
    LocalEpisodeSource source(problems, 1);
    std::vector<double> rates;
    TrainHooks hooks;
    hooks.on_checkpoint = [&](const TrainResult&) { rates.push_back(model.learning_rate()); };
    REQUIRE(train(model, problems, source, o, hooks).ok());
    REQUIRE(rates.size() == 4);
    return rates.front();
  };
  // Linear decay to a tenth over the stage: lr0 x (1 - 0.9 x stage progress).
  CHECK(first_rate(0) == Approx(1e-3 * (1 - 0.9 * 0.25)));
  CHECK(first_rate(0.5) == Approx(1e-3 * (1 - 0.9 * (0.5 + 0.5 * 0.25))));
}

TEST_CASE("training keeps the best placement it sampled, as the simulator prices it", "[learner]") {
  LearnerProblem p("llama-block:costs=doppler,blocks=2", 4);
  std::vector<TrainingProblem> problems{make_training_problem("block", p.graph, p.cluster, p.costs, p.sim.options())};
  PolicyConfig c;
  c.hidden = 16;
  c.head = 16;
  PolicyModel model(c, 2);
  LocalEpisodeSource source(problems, 1);
  TrainOptions o;
  o.episodes = 96;
  auto r = train(model, problems, source, o);
  REQUIRE(r.ok());
  const ProblemOutcome& out = r.value().problems.front();
  CHECK(out.episodes >= 96);
  REQUIRE(out.best.size() == p.graph.size());
  CHECK(p.sim.makespan(out.best) == Approx(out.best_makespan).epsilon(1e-12));
  CHECK(out.best_makespan <= out.greedy_makespan);
  CHECK(out.teacher_makespan == Approx(place_critical_path(PlacementProblem{p.graph, p.cluster, p.costs, p.sim.options()}).makespan));
}

namespace {

// Imitates the teacher's own picks until the greedy episode places every op in the teacher's
// order on the teacher's device (or 4,000 updates); that episode.
Episode imitate_picks(LearnerProblem& p) {
  PolicyModel untrained(tiny_policy(), 1);  // the teacher's episode does not depend on the weights
  RolloutOptions teacher;
  teacher.actor = Actor::teacher;
  const Episode expected = rollouts(untrained, p, 1, teacher, 1).front();
  auto same_as_teacher = [&](const Episode& e) { return e.ops == expected.ops && e.device == expected.device; };
  Objective pick{1.0, 0, 0, 1.0};
  pick.all_ties = false;
  const Episode e = imitate_until(p, pick, 4000, same_as_teacher);
  CHECK(same_as_teacher(e));
  return e;
}

// A root, six identical branches (head -> tail) and a sink: every head has the same bottom level,
// so has every tail. The tails' ids run against their heads' (head 0's tail is op 12), so the
// topological order (heads first, then their tails in the heads' order) is not the id order the
// teacher breaks ties by.
Graph reversed_branches() {
  const int branches = 6;
  GraphBuilder b("branches");
  auto op = [&](const std::string& name, double cost) {
    OpSpec s;
    s.name = name;
    s.cost = cost;
    s.transfer_cost = 2 * cost;
    return b.add_op(s);
  };
  const OpId root = op("root", 1);
  std::vector<OpId> heads, tails(branches);
  for (int i = 0; i < branches; ++i) heads.push_back(op("head" + std::to_string(i), 2));
  for (int i = branches - 1; i >= 0; --i) tails[i] = op("tail" + std::to_string(i), 3);
  const OpId sink = op("sink", 1);
  for (int i = 0; i < branches; ++i) {
    b.add_edge(root, heads[i]);
    b.add_edge(heads[i], tails[i]);
    b.add_edge(tails[i], sink);
  }
  return b.build().value();
}

}  // namespace

TEST_CASE("imitating the teacher's own picks reproduces its placement where ops and devices tie", "[learner]") {
  // Tied ops whose ids are not in topological order (SEL must see the id rank), and a transformer
  // block on 8 devices, where devices of equal earliest start differ in their other features (PLC
  // must see the device index; without it 4,000 updates do not get there).
  LearnerProblem branches(reversed_branches(), 3), block("llama-block:costs=doppler,blocks=2", 8);
  for (LearnerProblem* p : {&branches, &block}) {
    INFO(p->graph.size() << " ops");
    const Episode e = imitate_picks(*p);
    // The teacher is the critical-path heuristic (independent code): the same makespan.
    PlacementProblem problem{p->graph, p->cluster, p->costs, gantry::testing::doppler_sim()};
    CHECK(e.makespan == Approx(place_critical_path(problem).makespan));
  }
}
