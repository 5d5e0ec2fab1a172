#include "tuner/placement_method.hpp"

#include <chrono>
#include <mutex>

namespace gantry {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<MethodInfo> infos;
  std::vector<PlacementFunction> runs;
};

Registry& registry() {
  static Registry* r = [] {
    auto* fresh = new Registry;  // never destroyed: methods may be looked up during static teardown
    auto add = [&](MethodInfo info, PlacementFunction run) {
      fresh->infos.push_back(std::move(info));
      fresh->runs.push_back(std::move(run));
    };
    add({"single", "every op on the fastest device"}, [](const PlacementProblem& p, const SearchBudget&) { return place_single_device(p); });
    add({"round-robin", "ops in topological order dealt to devices in turn"},
        [](const PlacementProblem& p, const SearchBudget&) { return place_round_robin(p); });
    add({"random", "best of N uniformly random placements (--samples)"}, [](const PlacementProblem& p, const SearchBudget& b) {
      SearchBudget samples_only = b;  // --budget is search's: as a method of its own, random draws all samples
      samples_only.seconds = 0;
      return place_random(p, samples_only);
    });
    add({"cp", "DOPPLER critical-path teacher: highest bottom level first, device with the earliest start"},
        [](const PlacementProblem& p, const SearchBudget&) { return place_critical_path(p); });
    add({"heft", "HEFT: upward rank order, earliest finish time with insertion"},
        [](const PlacementProblem& p, const SearchBudget&) { return place_heft(p); });
    add({"heuristics", "the best of heft, cp, round-robin, single and random (50 samples): where search starts"},
        [](const PlacementProblem& p, const SearchBudget& b) { return best_heuristic(p, b); });
    add({"search", "simulated annealing on the simulator from the best heuristic (--budget covers both)"},
        [](const PlacementProblem& p, const SearchBudget& b) { return place_search(p, b); });
    return fresh;
  }();
  return *r;
}

}  // namespace

std::vector<MethodInfo> placement_methods() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.infos;
}

Status register_placement_method(MethodInfo info, PlacementFunction run) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const MethodInfo& m : r.infos)
    if (m.name == info.name) return make_error("placement method '" + info.name + "' is already registered");
  r.infos.push_back(std::move(info));
  r.runs.push_back(std::move(run));
  return Ok{};
}

Result<PlacementOutcome> run_placement_method(const std::string& method, const PlacementProblem& problem,
                                              const SearchBudget& budget) {
  Registry& r = registry();
  PlacementFunction run;
  std::string names;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (std::size_t i = 0; i < r.infos.size(); ++i) {
      if (r.infos[i].name == method) run = r.runs[i];
      names += (names.empty() ? "" : ", ") + r.infos[i].name;
    }
  }
  if (run) {  // called outside the lock: a method may take minutes, or look up another
    const auto begin = std::chrono::steady_clock::now();
    PlacementOutcome outcome;
    try {  // a method that cannot run (a learned one without its policy) says why by throwing
      outcome = run(problem, budget);
    } catch (const std::exception& e) {
      return make_error("placement method '" + method + "': " + e.what());
    }
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return outcome;
  }
  return make_error("unknown placement method '" + method + "' (expected one of: " + names + ")");
}

}  // namespace gantry
