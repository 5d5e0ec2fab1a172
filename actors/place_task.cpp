#include "actors/place_task.hpp"

#include "actors/net/msgpack_fields.hpp"
#include "actors/problem_spec.hpp"

namespace gantry {

namespace {

using wire::Decoder;
using wire::entry;
using wire::get;
using wire::Writer;

const char* const kRequestFields[] = {"method", "seed", "seconds", "evaluations"};
const char* const kResultFields[] = {"method", "placement", "makespan", "planned", "evaluations", "seconds"};

}  // namespace

std::string encode_body(const PlaceRequest& r) {
  Writer w;
  w.map(4);
  entry(w, "method", r.method);
  entry(w, "seed", r.seed);
  entry(w, "seconds", r.seconds);
  entry(w, "evaluations", r.evaluations);
  return w.take();
}

std::string encode_body(const PlacementOutcome& o) {
  Writer w;
  w.map(6);
  entry(w, "method", o.method);
  entry(w, "placement", o.placement);
  entry(w, "makespan", o.makespan);
  entry(w, "planned", o.planned);
  entry(w, "evaluations", o.evaluations);
  entry(w, "seconds", o.seconds);
  return w.take();
}

Result<PlaceRequest> decode_place_request(std::string_view body) {
  return wire::read_body<PlaceRequest>(body, "place request", kRequestFields,
                                       [](Decoder& d, PlaceRequest& r, std::string_view key) -> const char* {
                                         if (key == "method") return get(d, r.method);
                                         if (key == "seed") return get(d, r.seed);
                                         if (key == "seconds") return get(d, r.seconds);
                                         return get(d, r.evaluations);
                                       });
}

Result<PlacementOutcome> decode_place_result(std::string_view body) {
  auto o = wire::read_body<PlacementOutcome>(body, "place result", kResultFields,
                                             [](Decoder& d, PlacementOutcome& o, std::string_view key) -> const char* {
                                               if (key == "method") return get(d, o.method);
                                               if (key == "placement") return get(d, o.placement, "place result.placement");
                                               if (key == "makespan") return get(d, o.makespan);
                                               if (key == "planned") return get(d, o.planned);
                                               if (key == "evaluations") return get(d, o.evaluations);
                                               return get(d, o.seconds);
                                             });
  if (o && o.value().evaluations < 0) return make_error("place result: negative evaluations");
  return o;
}

Result<std::string> run_place_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                   std::unique_ptr<SlotScratch>&) {
  auto request = decode_place_request(task.body);
  if (!request) return request.error();
  SearchBudget budget;
  budget.seed = request.value().seed;
  budget.seconds = request.value().seconds;
  budget.evaluations = request.value().evaluations;
  auto outcome = run_placement_method(request.value().method, problem->placement(), budget);
  if (!outcome) return outcome.error();
  return encode_body(outcome.value());
}

}  // namespace gantry
