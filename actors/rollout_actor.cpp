#include "actors/rollout_actor.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>

#include "actors/messages.hpp"
#include "tuner/local_search.hpp"

namespace gantry {

namespace {

// Runs `request.evaluations` simulator runs exactly (unless `request.seconds` runs out first),
// cooling from t_start to t_end along the batch.
AnnealResult run_batch(LocalSearch& search, Placement start, const BatchRequest& request) {
  const auto begin = std::chrono::steady_clock::now();
  const auto seconds_used = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  const long cap = request.evaluations;
  auto progress = [&](long evaluations) {
    double p = cap > 0 ? static_cast<double>(evaluations) / cap : 0;
    if (request.seconds > 0) p = std::max(p, seconds_used() / request.seconds);
    return p;
  };
  return search.run(std::move(start), progress, request.t_start, request.t_end, {}, cap);
}

// The search of the problem the rollout served last (a simulator's buffers are worth keeping).
struct RolloutState {
  std::shared_ptr<const BuiltProblem> problem;
  std::unique_ptr<PlacementProblem> view;
  std::unique_ptr<LocalSearch> search;
};

}  // namespace

caf::behavior rollout_actor(caf::event_based_actor* self, int index) {
  auto state = std::make_shared<RolloutState>();
  return {
      [=](batch_atom, const std::shared_ptr<const BuiltProblem>& problem,
          const BatchRequest& request) -> caf::result<BatchResult> {
        BatchResult out;
        out.sequence = request.sequence;
        if (request.attempt < request.fail_times) {
          out.error = "rollout " + std::to_string(index) + ": injected fault in batch " + std::to_string(request.sequence);
          return out;
        }
        Placement start = request.start;
        const Status fits = start.check(problem->graph, problem->cluster, "batch start");
        if (!fits) {
          out.error = fits.error().message;
          return out;
        }
        if (state->problem != problem) {
          state->problem = problem;
          state->view = std::make_unique<PlacementProblem>(problem->placement());
          state->search = std::make_unique<LocalSearch>(*state->view, 0);  // reseeded by every batch
        }
        std::mt19937_64 rng(request.seed);
        if (request.perturb > 0) {  // a restart near the best: move a share of ops at random
          std::uniform_real_distribution<double> unit(0, 1);
          std::uniform_int_distribution<int> device(0, problem->cluster.size() - 1);
          for (auto& d : start.device)
            if (unit(rng) < request.perturb) d = device(rng);
        }
        state->search->reseed(request.seed);
        AnnealResult r = run_batch(*state->search, std::move(start), request);
        out.evaluations = r.evaluations;
        out.best_makespan = r.best_makespan;
        out.mean_makespan = r.mean_makespan;
        out.best = std::move(r.best);
        out.last = std::move(r.last);
        return out;
      },
  };
}

}  // namespace gantry
