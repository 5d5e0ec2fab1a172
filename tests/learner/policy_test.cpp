#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "learner/policy_model.hpp"
#include "learner/policy_runner.hpp"
#include "learner/rollout.hpp"
#include "tests/learner/learner_fixture.hpp"
#include "tuner/placement_method.hpp"

using namespace gantry;
using gantry::testing::LearnerProblem;

namespace {

PolicyConfig small_config(Ablation ablation, int devices) {
  PolicyConfig c;
  c.hidden = 16;
  c.head = 16;
  c.steps = 2;
  c.ablation = ablation;
  c.devices = ablation == Ablation::gdp ? devices : 0;
  return c;
}

Episode sample(const PolicyWeights& w, LearnerProblem& p, std::uint64_t seed, Actor actor = Actor::sample) {
  PolicyRunner runner(w, p.features, p.graph);
  std::mt19937_64 rng(seed);
  RolloutOptions o;
  o.actor = actor;
  return run_episode(runner, p.env, p.sim, o, rng);
}

}  // namespace

TEST_CASE("policy bytes round-trip exactly and damaged bytes are refused", "[learner]") {
  PolicyModel model(small_config(Ablation::dual, 0), 7);
  const PolicyWeights w = model.weights();
  CHECK(w.parameter_count() > 1000);
  auto back = PolicyWeights::from_bytes(w.to_bytes(), "test");
  REQUIRE(back.ok());
  CHECK(back.value().config.hidden == 16);
  for (const auto& [name, t] : w.tensors) CHECK(back.value().at(name).data == t.data);

  std::string bytes = w.to_bytes();
  auto cut = PolicyWeights::from_bytes(bytes.substr(0, bytes.size() / 2), "cut.policy");
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().message.find("cut.policy") == 0);
  CHECK_FALSE(PolicyWeights::from_bytes("not a policy", "x").ok());
  PolicyWeights missing = w;
  missing.tensors.erase("plc.l2.w");
  auto m = PolicyWeights::from_bytes(missing.to_bytes(), "m");
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().message.find("plc.l2.w") != std::string::npos);
}

TEST_CASE("the teacher's episode is the critical-path heuristic's placement", "[learner]") {
  for (const char* workload : {"llama-block:costs=doppler,blocks=2", "ffnn:costs=doppler", "random:ops=120,seed=3"}) {
    LearnerProblem p(workload, 4);
    PolicyModel model(small_config(Ablation::dual, 0), 1);
    const Episode teacher = sample(model.weights(), p, 1, Actor::teacher);
    const PlacementOutcome cp = place_critical_path(PlacementProblem{p.graph, p.cluster, p.costs, p.sim.options()});
    CHECK(teacher.placement().device == cp.placement.device);
    CHECK(teacher.planned == Approx(cp.planned));
    CHECK(teacher.makespan == Approx(cp.makespan));
  }
}

TEST_CASE("every step's candidates are the unplaced ops whose predecessors are all placed (a frontier within the window)", "[learner]") {
  LearnerProblem p("random:ops=80,seed=5", 3);
  PolicyModel model(small_config(Ablation::dual, 0), 3);
  const Episode e = sample(model.weights(), p, 11);
  REQUIRE(e.steps() == p.graph.size());
  std::vector<bool> placed(p.graph.size(), false);
  for (int t = 0; t < e.steps(); ++t) {
    std::set<OpId> expected;
    for (OpId op = 0; op < p.graph.size(); ++op) {
      bool ready = !placed[op];
      for (OpId q : p.graph.preds(op)) ready = ready && placed[q];
      if (ready) expected.insert(op);
    }
    REQUIRE(expected.size() <= static_cast<std::size_t>(kCandidateWindow));
    std::set<OpId> got(e.candidates.begin() + e.candidate_offsets[t], e.candidates.begin() + e.candidate_offsets[t + 1]);
    REQUIRE(got == expected);
    CHECK(got.count(e.ops[t]) == 1);
    placed[e.ops[t]] = true;
  }
}

TEST_CASE("on a frontier wider than the window, SEL chooses among the most urgent ready ops", "[learner]") {
  // A root, then 150 independent leaves: leaf i costs (i * 37) % 150 + 1, so its bottom level (it
  // has no successor) is that cost; ties are impossible.
  GraphBuilder b("wide");
  OpSpec root;
  root.name = "root";
  root.cost = 1;
  b.add_op(root);
  const int leaves = 150;
  std::vector<double> cost(leaves + 1, 1.0);
  for (int i = 1; i <= leaves; ++i) {
    OpSpec leaf;
    leaf.name = "leaf" + std::to_string(i);
    leaf.cost = cost[i] = (i * 37) % leaves + 1;
    b.add_op(leaf);
    b.add_edge(0, i);
  }
  LearnerProblem p(b.build().value(), 2);
  PolicyModel model(small_config(Ablation::dual, 0), 5);
  const Episode e = sample(model.weights(), p, 3);
  REQUIRE(e.steps() == leaves + 1);
  std::set<OpId> left;  // ready leaves after each step
  for (int i = 1; i <= leaves; ++i) left.insert(i);
  for (int t = 1; t < e.steps(); ++t) {
    // Expected: the min(64, ready) ready leaves of highest cost.
    std::vector<OpId> by_cost(left.begin(), left.end());
    std::sort(by_cost.begin(), by_cost.end(), [&](OpId x, OpId y) { return cost[x] > cost[y]; });
    by_cost.resize(std::min<std::size_t>(by_cost.size(), kCandidateWindow));
    const std::set<OpId> expected(by_cost.begin(), by_cost.end());
    const std::set<OpId> got(e.candidates.begin() + e.candidate_offsets[t], e.candidates.begin() + e.candidate_offsets[t + 1]);
    REQUIRE(got == expected);
    // The teacher's choice (the highest level) is among them.
    CHECK(e.teacher_ops[e.teacher_op_offsets[t]] == by_cost.front());
    left.erase(e.ops[t]);
  }
}

TEST_CASE("the plain-C++ forward gives LibTorch's probabilities", "[learner]") {
  for (Ablation a : {Ablation::dual, Ablation::plc_only, Ablation::random_sel, Ablation::gdp}) {
    INFO(to_string(a));
    LearnerProblem p("llama-block:costs=doppler,blocks=2", 4);
    PolicyModel model(small_config(a, 4), 5);
    // Fresh weights have zero biases: perturb every tensor so that each one counts.
    PolicyWeights w = model.weights();
    std::mt19937_64 rng(11);
    std::normal_distribution<float> noise(0.0f, 0.2f);
    for (auto& [name, t] : w.tensors)
      for (float& x : t.data) x += noise(rng);
    model.load(w);
    const Episode e = sample(model.weights(), p, 9);
    const std::vector<double> torch_logp = model.step_log_probs(p.graph, p.features, e);
    REQUIRE(torch_logp.size() == e.behaviour_logp.size());
    double worst = 0;
    for (std::size_t t = 0; t < torch_logp.size(); ++t)
      worst = std::max(worst, std::fabs(torch_logp[t] - e.behaviour_logp[t]));
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("episodes round-trip through bytes and damage is refused", "[learner]") {
  LearnerProblem p("ffnn:costs=doppler,layers=2", 4);
  PolicyModel model(small_config(Ablation::dual, 0), 2);
  Episode e = sample(model.weights(), p, 4);
  e.version = 17;
  auto back = Episode::from_bytes(e.to_bytes(), "t");
  REQUIRE(back.ok());
  CHECK(back.value().ops == e.ops);
  CHECK(back.value().device == e.device);
  CHECK(back.value().candidates == e.candidates);
  CHECK(back.value().device_features == e.device_features);
  CHECK(back.value().version == 17);
  CHECK(back.value().makespan == e.makespan);
  CHECK(e.check(p.graph, 4, Ablation::dual).ok());
  // What a learner refuses from a worker (the LibTorch pass and the replay index with these).
  Episode reversed = e;
  std::reverse(reversed.ops.begin(), reversed.ops.end());
  CHECK_FALSE(reversed.check(p.graph, 4, Ablation::dual).ok());  // not a topological order
  Episode no_features = e;
  no_features.device_features.clear();
  CHECK_FALSE(no_features.check(p.graph, 4, Ablation::dual).ok());
  Episode nan = e;
  nan.behaviour_logp[5] = std::nanf("");
  CHECK_FALSE(nan.check(p.graph, 4, Ablation::dual).ok());
  Episode wrong_choice = e;
  wrong_choice.ops[0] = wrong_choice.ops[1];
  CHECK_FALSE(wrong_choice.check(p.graph, 4, Ablation::dual).ok());
  CHECK_FALSE(e.check(p.graph, 8, Ablation::dual).ok());
  e.device[3] = 9;
  CHECK_FALSE(Episode::from_bytes(e.to_bytes(), "t").ok());
}

TEST_CASE("a policy trained on 4 devices places on 8", "[learner]") {
  LearnerProblem p4("llama-block:costs=doppler,blocks=2", 4), p8("llama-block:costs=doppler,blocks=2", 8);
  PolicyModel model(small_config(Ablation::dual, 0), 2);
  const Episode e = sample(model.weights(), p8, 3);
  std::set<int> used(e.device.begin(), e.device.end());
  CHECK(*used.rbegin() < 8);
  CHECK(*used.rbegin() >= 4);  // PLC scored the devices a 4-device policy never saw, and chose some
  CHECK(std::isfinite(e.makespan));
  // The same weights score 4 devices too.
  CHECK(std::isfinite(sample(model.weights(), p4, 3).makespan));
}
