#include "learner/learned_placement.hpp"

#include <chrono>
#include <mutex>

#include "core/hex.hpp"
#include "learner/trainer.hpp"

namespace gantry {

const char* default_policy_hex();  // generated: learner/default_policy.cpp.in

Result<PlacementOutcome> place_with_policy(const PolicyWeights& weights, const PlacementProblem& problem) {
  const auto begin = std::chrono::steady_clock::now();
  const TrainingProblem p = training_view(problem.graph.source(), problem.graph, problem.cluster, problem.costs, problem.sim);
  auto episode = greedy_episode(weights, p);
  if (!episode) return episode.error();
  PlacementOutcome out;
  out.method = "doppler";
  out.placement = replay_placement(p, episode.value());
  out.makespan = episode.value().makespan;
  out.planned = episode.value().planned;
  out.evaluations = 1;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return out;
}

Result<PolicyWeights> default_policy() {
  const std::string hex = default_policy_hex();
  if (hex.empty()) return make_error("this gantry was built without a default policy (configs/policies/doppler-default.policy)");
  std::string bytes;
  if (!hex_decode(hex, bytes)) return make_error("the built-in default policy is not valid hex");
  return PolicyWeights::from_bytes(bytes, "built-in policy doppler-default");
}

void register_learned_methods() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)register_placement_method(
        MethodInfo{"doppler", "DOPPLER's learned dual policy (SEL + PLC), one greedy episode of the built-in policy"},
        [](const PlacementProblem& problem, const SearchBudget&) {
          static const Result<PolicyWeights> policy = default_policy();
          if (!policy) throw std::runtime_error(policy.error().message);
          auto out = place_with_policy(policy.value(), problem);
          if (!out) throw std::runtime_error(out.error().message);
          return std::move(out).value();
        });
  });
}

}  // namespace gantry
