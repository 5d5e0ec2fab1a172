#pragma once
// Simulated annealing on the simulator, as a reusable engine: `gantry place --method search` runs
// it once with a time budget, and rollout actors run it in short batches from the best known
// placement. Each instance owns its simulator (one per thread).
#include <cstdint>
#include <functional>
#include <memory>
#include <random>

#include "sim/simulator.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

struct AnnealResult {
  Placement best;
  double best_makespan = 0;
  double start_makespan = 0;
  double mean_makespan = 0;  // over every evaluated candidate
  long evaluations = 0;
  Placement last;            // where the walk ended, to continue it in a later run
  double last_makespan = 0;
};

class LocalSearch {
 public:
  LocalSearch(const PlacementProblem& problem, std::uint64_t seed);

  // Anneals from `start`. `progress(evaluations)` returns how far the run is (0..1): the
  // temperature cools from t_start to t_end along it and the run stops at 1 (it is asked every
  // 32 evaluations). `on_improvement` sees every new best (evaluations so far, makespan). With
  // `max_evaluations` > 0 the run stops after exactly that many evaluations, the start's included:
  // simulator runs, or in the list phase list decodes (the simulator run that confirms each new
  // best of that phase is not counted). `start` must be a valid placement for the problem
  // (std::invalid_argument if not).
  AnnealResult run(Placement start, const std::function<double(long)>& progress, double t_start = 0.02,
                   double t_end = 2e-4, const std::function<void(long, double)>& on_improvement = {},
                   long max_evaluations = 0);

  void reseed(std::uint64_t seed) { rng_.seed(seed); }

  // Whether run() searches priority lists first (see local_search.cpp): true for priority
  // dispatch on identical single-stream devices without communication costs.

  ~LocalSearch();

 private:
  struct Lists;
  // The list phase of run(): anneals priority lists, from `start`'s priority order and the list
  // rules, until progress reaches `until`; a better list schedule becomes `result.best`.
  void run_lists(const Placement& start, AnnealResult& result, double& sum,
                 const std::function<double(long)>& progress, double until, double t_start, double t_end,
                 const std::function<void(long, double)>& on_improvement, long max_evaluations);

  const PlacementProblem& problem_;
  Simulator sim_;
  std::mt19937_64 rng_;
  bool with_priority_;
  std::unique_ptr<Lists> lists_;
};

}  // namespace gantry
