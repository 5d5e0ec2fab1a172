#include "actors/rollout_actor.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>

#include "actors/messages.hpp"

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

}  // namespace

caf::behavior rollout_actor(caf::event_based_actor* self, const PlacementProblem* problem, int index) {
  auto search = std::make_shared<LocalSearch>(*problem, 0);  // reseeded by every batch request
  auto chain = std::make_shared<Placement>();  // where this rollout's walk stands between batches
  return {
      [=](batch_atom, const BatchRequest& request) -> caf::result<BatchResult> {
        if (request.fail)
          return caf::make_error(caf::sec::runtime_error,
                                 "rollout " + std::to_string(index) + ": injected fault in batch " +
                                     std::to_string(request.sequence));
        std::mt19937_64 rng(request.seed);
        Placement start = request.continue_chain && chain->size() > 0 ? *chain : request.start;
        if (request.perturb > 0) {  // a restart near the best: move a share of ops at random
          std::uniform_real_distribution<double> unit(0, 1);
          std::uniform_int_distribution<int> device(0, problem->cluster.size() - 1);
          for (auto& d : start.device)
            if (unit(rng) < request.perturb) d = device(rng);
        }
        search->reseed(request.seed);
        BatchResult out;
        out.result = run_batch(*search, std::move(start), request);
        *chain = out.result.last;
        out.result.last = Placement{};  // the tuner needs only the best
        out.rollout = index;
        out.sequence = request.sequence;
        return out;
      },
  };
}

}  // namespace gantry
