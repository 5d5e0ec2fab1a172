#pragma once
// Runs one episode: SEL (or the ablation's order) picks each next op, PLC (or GDP's per-op
// distribution) its device, the environment books it, and the simulator prices the placement.
#include <cstdint>
#include <random>

#include "learner/episode.hpp"
#include "learner/placement_env.hpp"
#include "learner/policy_runner.hpp"
#include "sim/simulator.hpp"

namespace gantry {

enum class Actor {
  sample,   // draw actions from the policy (with `epsilon` uniform mixing)
  greedy,   // the most probable action
  teacher,  // the critical-path teacher (ties: lowest op id, lowest device), = place_critical_path
};

struct RolloutOptions {
  Actor actor = Actor::sample;
  double epsilon = 0;      // share of uniformly random actions mixed into sampling
  double teacher_mix = 0;  // per step, follow the teacher with this probability (imitation, DAgger)
  std::uint64_t version = 0;
  int problem = 0;
};

// `runner` and `env` must be built on the same graph as `simulator`; `env` is reset first.
Episode run_episode(const PolicyRunner& runner, PlacementEnv& env, Simulator& simulator,
                    const RolloutOptions& options, std::mt19937_64& rng);

}  // namespace gantry
