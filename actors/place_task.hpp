#pragma once
// The `place` task kind: one run of a registered placement method (tuner/placement_method.hpp) on a
// worker, under a budget. A tuning job's episode 0, the heuristics it starts from, is one; other
// methods (a learned policy's greedy episode) travel the same way.
#include <memory>
#include <string>
#include <string_view>

#include "actors/rollout_task.hpp"
#include "core/result.hpp"
#include "tuner/placement_method.hpp"

namespace gantry {

struct BuiltProblem;
struct SlotScratch;

inline constexpr const char* kPlaceTask = "place";

struct PlaceRequest {
  std::string method;     // a name of placement_methods()
  std::uint64_t seed = 1;
  double seconds = 0;     // the method's budget (0 = none)
  long evaluations = 0;   // (0 = none)
};

std::string encode_body(const PlaceRequest& request);
std::string encode_body(const PlacementOutcome& outcome);
Result<PlaceRequest> decode_place_request(std::string_view body);
Result<PlacementOutcome> decode_place_result(std::string_view body);

Result<std::string> run_place_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                   std::unique_ptr<SlotScratch>& scratch);

}  // namespace gantry
