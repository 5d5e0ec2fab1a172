#include "tuner/placement_method.hpp"

#include <chrono>

namespace gantry {

const std::vector<MethodInfo>& placement_methods() {
  static const std::vector<MethodInfo> methods = {
      {"single", "every op on the fastest device"},
      {"round-robin", "ops in topological order dealt to devices in turn"},
      {"random", "best of N uniformly random placements (--samples)"},
      {"cp", "DOPPLER critical-path teacher: highest bottom level first, device with the earliest start"},
      {"heft", "HEFT: upward rank order, earliest finish time with insertion"},
      {"search", "simulated annealing on the simulator from the best heuristic (--budget)"},
  };
  return methods;
}

Result<PlacementOutcome> run_placement_method(const std::string& method, const PlacementProblem& problem,
                                              const SearchBudget& budget) {
  const auto begin = std::chrono::steady_clock::now();
  PlacementOutcome outcome;
  if (method == "single")
    outcome = place_single_device(problem);
  else if (method == "round-robin")
    outcome = place_round_robin(problem);
  else if (method == "random")
    outcome = place_random(problem, budget);
  else if (method == "cp")
    outcome = place_critical_path(problem);
  else if (method == "heft")
    outcome = place_heft(problem);
  else if (method == "search")
    outcome = place_search(problem, budget);
  else {
    std::string names;
    for (const MethodInfo& m : placement_methods()) names += (names.empty() ? "" : ", ") + m.name;
    return make_error("unknown placement method '" + method + "' (expected one of: " + names + ")");
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return outcome;
}

}  // namespace gantry
