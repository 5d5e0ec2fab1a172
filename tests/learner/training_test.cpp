#include <catch2/catch.hpp>

#include <random>

#include "learner/policy_model.hpp"
#include "learner/policy_runner.hpp"
#include "learner/rollout.hpp"
#include "tests/learner/learner_fixture.hpp"

using namespace gantry;
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
  PolicyConfig c;
  c.hidden = 16;
  c.head = 16;
  PolicyModel model(c, 1);
  model.set_learning_rate(3e-3);
  RolloutOptions greedy;
  greedy.actor = Actor::greedy;
  const Episode untrained = rollouts(model, p, 1, greedy, 99).front();
  CHECK(untrained.sel_matches + untrained.plc_matches < 2 * untrained.steps());  // something to learn
  RolloutOptions o;
  o.teacher_mix = 0.5;
  int iterations = 0;
  Episode e = untrained;
  while (iterations < 400 && e.sel_matches + e.plc_matches < 2 * e.steps()) {
    for (int k = 0; k < 10; ++k, ++iterations)
      model.update({batch_of(p, rollouts(model, p, 4, o, iterations))}, Objective{1.0, 0, 0, 1.0});
    e = rollouts(model, p, 1, greedy, 99).front();
  }
  INFO("iterations " << iterations);
  CHECK(e.sel_matches == e.steps());
  CHECK(e.plc_matches == e.steps());
}

TEST_CASE("scratch: teacher with random ties", "[.scratch]") {
  for (const char* w : {"llama-block:costs=doppler", "ffnn:costs=doppler", "chainmm:costs=doppler", "llama-layer:costs=doppler"}) {
    LearnerProblem p(w, 4);
    PolicyConfig c;
    PolicyModel model(c, 1);
    RolloutOptions o;
    o.teacher_mix = 1.0;
    auto eps = rollouts(model, p, 50, o, 7);
    RolloutOptions t;
    t.actor = Actor::teacher;
    double teacher = rollouts(model, p, 1, t, 1).front().makespan;
    double sum = 0, best = 1e300, worst = 0;
    for (auto& e : eps) { sum += e.makespan; best = std::min(best, e.makespan); worst = std::max(worst, e.makespan); }
    std::printf("%s teacher %.4g random-tie mean %.3f best %.3f worst %.3f\n", w, teacher, sum / eps.size() / teacher, best / teacher, worst / teacher);
  }
}
