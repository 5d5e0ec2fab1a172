#include "actors/rollout_actor.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>

#include "actors/messages.hpp"

namespace gantry {

namespace {

// Runs `request.evaluations` simulator runs exactly (unless `request.seconds` runs out first).
// A search run stops only where it checks its progress (after 1 + 32k evaluations, or after any
// number if it checks every step), so a cap is split into runs that each stop on such a point:
// one of 1 + 32k, then single evaluations for the rest. Each run continues where the last ended.
AnnealResult run_batch(LocalSearch& search, Placement start, const BatchRequest& request) {
  const auto begin = std::chrono::steady_clock::now();
  const auto seconds_used = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  const long cap = request.evaluations;
  AnnealResult total;
  double sum = 0;
  bool first = true;
  for (;;) {
    const long done = total.evaluations;
    const long target = cap > 0 ? 1 + 32 * ((cap - done - 1) / 32) : 0;  // evaluations of this run
    const double from = cap > 0 ? static_cast<double>(done) / cap : 0;
    const double to = cap > 0 ? static_cast<double>(done + target) / cap : 1;
    const double ratio = request.t_end / request.t_start;
    auto progress = [&](long evaluations) {
      double p = 0;
      if (target > 0) p = evaluations >= target ? 1.0 : static_cast<double>(evaluations) / target;
      if (request.seconds > 0) p = std::max(p, seconds_used() / request.seconds);
      return p;
    };
    AnnealResult r = search.run(first ? std::move(start) : total.last, progress,
                                request.t_start * std::pow(ratio, from), request.t_start * std::pow(ratio, to));
    sum += r.mean_makespan * static_cast<double>(r.evaluations);
    total.evaluations += r.evaluations;
    if (first || r.best_makespan < total.best_makespan) {
      total.best = std::move(r.best);
      total.best_makespan = r.best_makespan;
    }
    if (first) total.start_makespan = r.start_makespan;
    total.last = std::move(r.last);
    total.last_makespan = r.last_makespan;
    first = false;
    if (cap <= 0 || total.evaluations >= cap) break;
    if (request.seconds > 0 && seconds_used() >= request.seconds) break;
  }
  total.mean_makespan = total.evaluations > 0 ? sum / static_cast<double>(total.evaluations) : 0;
  return total;
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
