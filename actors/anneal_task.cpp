#include "actors/anneal_task.hpp"

#include <chrono>
#include <random>

#include "actors/net/msgpack_fields.hpp"
#include "actors/problem_spec.hpp"
#include "actors/task_kinds.hpp"
#include "tuner/local_search.hpp"

namespace gantry {

namespace {

using wire::Decoder;
using wire::entry;
using wire::get;
using wire::Writer;

const char* const kRequestFields[] = {"start", "seed", "evaluations", "seconds", "t_start", "t_end", "perturb", "fail_times"};
const char* const kResultFields[] = {"evaluations", "best_makespan", "mean_makespan", "best", "last"};

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

// The search of the problem the slot served last (a simulator's buffers are worth keeping).
struct AnnealScratch : SlotScratch {
  std::shared_ptr<const BuiltProblem> problem;
  std::unique_ptr<PlacementProblem> view;
  std::unique_ptr<LocalSearch> search;
};

}  // namespace

std::string encode_body(const BatchRequest& b) {
  Writer w;
  w.map(8);
  entry(w, "start", b.start);
  entry(w, "seed", b.seed);
  entry(w, "evaluations", b.evaluations);
  entry(w, "seconds", b.seconds);
  entry(w, "t_start", b.t_start);
  entry(w, "t_end", b.t_end);
  entry(w, "perturb", b.perturb);
  entry(w, "fail_times", b.fail_times);
  return w.take();
}

std::string encode_body(const BatchResult& r) {
  Writer w;
  w.map(5);
  entry(w, "evaluations", r.evaluations);
  entry(w, "best_makespan", r.best_makespan);
  entry(w, "mean_makespan", r.mean_makespan);
  entry(w, "best", r.best);
  entry(w, "last", r.last);
  return w.take();
}

Result<BatchRequest> decode_batch_request(std::string_view body) {
  return wire::read_body<BatchRequest>(body, "anneal request", kRequestFields,
                                       [](Decoder& d, BatchRequest& b, std::string_view key) -> const char* {
                                         if (key == "start") return get(d, b.start, "anneal request.start");
                                         if (key == "seed") return get(d, b.seed);
                                         if (key == "evaluations") return get(d, b.evaluations);
                                         if (key == "seconds") return get(d, b.seconds);
                                         if (key == "t_start") return get(d, b.t_start);
                                         if (key == "t_end") return get(d, b.t_end);
                                         if (key == "perturb") return get(d, b.perturb);
                                         return get(d, b.fail_times);
                                       });
}

Result<BatchResult> decode_batch_result(std::string_view body) {
  auto r = wire::read_body<BatchResult>(body, "anneal result", kResultFields,
                                        [](Decoder& d, BatchResult& r, std::string_view key) -> const char* {
                                          if (key == "evaluations") return get(d, r.evaluations);
                                          if (key == "best_makespan") return get(d, r.best_makespan);
                                          if (key == "mean_makespan") return get(d, r.mean_makespan);
                                          if (key == "best") return get(d, r.best, "anneal result.best");
                                          return get(d, r.last, "anneal result.last");
                                        });
  if (r && r.value().evaluations < 0) return make_error("anneal result: negative evaluations");
  return r;
}

Result<std::string> run_anneal_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                    std::unique_ptr<SlotScratch>& scratch) {
  auto request = decode_batch_request(task.body);
  if (!request) return request.error();
  const BatchRequest& b = request.value();
  if (task.attempt < b.fail_times) return make_error("injected fault in batch " + std::to_string(task.sequence));
  Placement start = b.start;
  if (Status fits = start.check(problem->graph, problem->cluster, "batch start"); !fits) return fits.error();
  auto* mine = dynamic_cast<AnnealScratch*>(scratch.get());
  if (!mine) {
    scratch = std::make_unique<AnnealScratch>();
    mine = static_cast<AnnealScratch*>(scratch.get());
  }
  if (mine->problem != problem) {
    mine->problem = problem;
    mine->view = std::make_unique<PlacementProblem>(problem->placement());
    mine->search = std::make_unique<LocalSearch>(*mine->view, 0);  // reseeded by every batch
  }
  std::mt19937_64 rng(b.seed);
  if (b.perturb > 0) {  // a restart near the best: move a share of ops at random
    std::uniform_real_distribution<double> unit(0, 1);
    std::uniform_int_distribution<int> device(0, problem->cluster.size() - 1);
    for (auto& d : start.device)
      if (unit(rng) < b.perturb) d = device(rng);
  }
  mine->search->reseed(b.seed);
  AnnealResult r = run_batch(*mine->search, std::move(start), b);
  BatchResult out;
  out.evaluations = r.evaluations;
  out.best_makespan = r.best_makespan;
  out.mean_makespan = r.mean_makespan;
  out.best = std::move(r.best);
  out.last = std::move(r.last);
  return encode_body(out);
}

}  // namespace gantry
