#include "actors/rollout_actor.hpp"

#include <chrono>
#include <memory>
#include <random>

#include "actors/messages.hpp"

namespace gantry {

caf::behavior rollout_actor(caf::event_based_actor* self, const PlacementProblem* problem, int index) {
  auto search = std::make_shared<LocalSearch>(*problem, 0);  // reseeded by every batch request
  auto chain = std::make_shared<Placement>();  // where this rollout's walk stands between batches
  return {
      [=](batch_atom, const BatchRequest& request) {
        std::mt19937_64 rng(request.seed);
        Placement start = request.continue_chain && chain->size() > 0 ? *chain : request.start;
        if (request.perturb > 0) {  // a restart near the best: move a share of ops at random
          std::uniform_real_distribution<double> unit(0, 1);
          std::uniform_int_distribution<int> device(0, problem->cluster.size() - 1);
          for (auto& d : start.device)
            if (unit(rng) < request.perturb) d = device(rng);
        }
        const auto begin = std::chrono::steady_clock::now();
        auto progress = [&](long evaluations) {
          if (request.evaluations > 0) return static_cast<double>(evaluations) / request.evaluations;
          return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() / request.seconds;
        };
        search->reseed(request.seed);
        BatchResult out;
        out.result = search->run(std::move(start), progress, request.t_start, request.t_end);
        *chain = out.result.last;
        out.result.last = Placement{};  // the tuner needs only the best
        out.rollout = index;
        out.sequence = request.sequence;
        return out;
      },
  };
}

}  // namespace gantry
