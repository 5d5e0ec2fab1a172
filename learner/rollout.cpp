#include "learner/rollout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gantry {
namespace {

// Softmax of `logits` in place; returns nothing, `probs` sums to 1.
void softmax(const float* logits, int n, std::vector<double>& probs) {
  probs.resize(n);
  const float top = *std::max_element(logits, logits + n);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += probs[i] = std::exp(static_cast<double>(logits[i] - top));
  for (int i = 0; i < n; ++i) probs[i] /= sum;
}

int argmax(const float* v, int n) { return static_cast<int>(std::max_element(v, v + n) - v); }

bool contains(const std::vector<int>& set, int x) { return std::find(set.begin(), set.end(), x) != set.end(); }

// One decision among n options with policy probabilities `probs`; `teacher` lists the teacher's
// options (the first is its pick). Returns the option and the log-probability the behaviour
// (mixture of policy, uniform and teacher) gave it.
struct Choice {
  int index = 0;
  double logp = 0;
};

Choice choose(const std::vector<double>& probs, const float* logits, const std::vector<int>& teacher,
              const RolloutOptions& o, std::mt19937_64& rng) {
  const int n = static_cast<int>(probs.size());
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (o.actor == Actor::teacher) return {teacher.front(), 0.0};
  if (o.actor == Actor::greedy) return {argmax(logits, n), std::log(probs[argmax(logits, n)])};
  int pick;
  if (o.teacher_mix > 0 && unit(rng) < o.teacher_mix) {
    pick = teacher[std::uniform_int_distribution<int>(0, static_cast<int>(teacher.size()) - 1)(rng)];
  } else if (o.epsilon > 0 && unit(rng) < o.epsilon) {
    pick = std::uniform_int_distribution<int>(0, n - 1)(rng);
  } else {
    double r = unit(rng), acc = 0;
    pick = n - 1;
    for (int i = 0; i < n; ++i)
      if ((acc += probs[i]) > r) { pick = i; break; }
  }
  double p = (1 - o.teacher_mix) * ((1 - o.epsilon) * probs[pick] + o.epsilon / n);
  if (contains(teacher, pick)) p += o.teacher_mix / static_cast<double>(teacher.size());
  return {pick, std::log(std::max(p, 1e-300))};
}

}  // namespace

Episode run_episode(const PolicyRunner& runner, PlacementEnv& env, Simulator& simulator,
                    const RolloutOptions& options, std::mt19937_64& rng) {
  const Ablation ablation = runner.config().ablation;
  const int devices = env.devices();
  env.reset();
  Episode ep;
  ep.version = options.version;
  ep.problem = options.problem;
  ep.devices = devices;
  const bool has_sel = ablation == Ablation::dual || ablation == Ablation::random_sel;
  const int a = ablation == Ablation::gdp ? 0 : runner.head();
  std::vector<float> features(static_cast<std::size_t>(devices) * kDeviceFeatures), logits, dev_logits(devices);
  std::vector<float> cand_features;
  std::vector<double> start(devices), probs;
  std::vector<float> summary(static_cast<std::size_t>(devices) * a, 0.0f);
  std::vector<int> counts(devices, 0), teacher_dev, teacher_index;
  std::vector<OpId> teacher_ops;
  if (has_sel) ep.candidate_offsets.push_back(0);
  ep.teacher_op_offsets.push_back(0);
  ep.teacher_device_offsets.push_back(0);

  while (!env.done()) {
    const std::vector<OpId>& cand = env.candidates();
    env.teacher_ops(teacher_ops);
    OpId op = env.topological_order()[ep.ops.size()];  // without SEL: every predecessor is placed
    double logp = 0;
    if (has_sel) {
      const int c = static_cast<int>(cand.size());
      logits.assign(c, 0.0f);
      if (ablation == Ablation::dual) {
        cand_features.resize(static_cast<std::size_t>(c) * kCandidateFeatures);
        env.describe_candidates(cand_features.data());
        runner.sel_logits(cand, cand_features.data(), logits.data());
        ep.candidate_features.insert(ep.candidate_features.end(), cand_features.begin(), cand_features.end());
      }
      softmax(logits.data(), c, probs);
      // The teacher's candidates, its own pick (the lowest op id, as place_critical_path) first.
      teacher_index.clear();
      for (int i = 0; i < c; ++i)
        if (std::find(teacher_ops.begin(), teacher_ops.end(), cand[i]) != teacher_ops.end()) teacher_index.push_back(i);
      if (teacher_index.empty()) teacher_index.push_back(0);  // only with non-finite levels: any candidate
      std::iter_swap(teacher_index.begin(), std::min_element(teacher_index.begin(), teacher_index.end(),
                                                             [&](int x, int y) { return cand[x] < cand[y]; }));
      const Choice pick = choose(probs, logits.data(), teacher_index, options, rng);
      op = cand[pick.index];
      logp += pick.logp;
      if (ablation == Ablation::dual && contains(teacher_index, argmax(logits.data(), c))) ++ep.sel_matches;
      ep.candidates.insert(ep.candidates.end(), cand.begin(), cand.end());
      ep.candidate_offsets.push_back(static_cast<std::int32_t>(ep.candidates.size()));
    }
    ep.teacher_ops.insert(ep.teacher_ops.end(), teacher_ops.begin(), teacher_ops.end());
    ep.teacher_op_offsets.push_back(static_cast<std::int32_t>(ep.teacher_ops.size()));

    env.describe(op, features.data(), start.data());
    env.teacher_devices(start.data(), teacher_dev);
    if (ablation == Ablation::gdp) std::copy(runner.gdp_logits(op), runner.gdp_logits(op) + devices, dev_logits.begin());
    else runner.plc_logits(op, features.data(), summary.data(), counts.data(), devices, dev_logits.data());
    softmax(dev_logits.data(), devices, probs);
    const Choice pick = choose(probs, dev_logits.data(), teacher_dev, options, rng);
    if (contains(teacher_dev, argmax(dev_logits.data(), devices))) ++ep.plc_matches;
    logp += pick.logp;

    const int d = pick.index;
    ep.ops.push_back(op);
    ep.device.push_back(d);
    ep.behaviour_logp.push_back(static_cast<float>(logp));
    if (ablation != Ablation::gdp) ep.device_features.insert(ep.device_features.end(), features.begin(), features.end());
    ep.teacher_devices.insert(ep.teacher_devices.end(), teacher_dev.begin(), teacher_dev.end());
    ep.teacher_device_offsets.push_back(static_cast<std::int32_t>(ep.teacher_devices.size()));
    if (a > 0) {
      const float* term = runner.summary_term(op);
      for (int k = 0; k < a; ++k) summary[d * a + k] += term[k];
    }
    ++counts[d];
    env.place(op, d, start[d]);
  }
  const Placement placement = env.placement();
  ep.planned = env.planned_length();
  ep.makespan = simulator.makespan(placement.device.data(), placement.priority.data());
  return ep;
}

}  // namespace gantry
