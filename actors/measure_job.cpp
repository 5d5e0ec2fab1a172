#include "actors/measure_job.hpp"

#include <cstdio>

#include "actors/problem_spec.hpp"
#include "actors/store_requests.hpp"
#include "sim/simulator.hpp"

namespace gantry {

namespace {

struct ChosenPlacement {
  Placement placement;
  std::string source;
  bool best = false;
};

Result<ChosenPlacement> choose_placement(caf::scoped_actor& self, const MeasureJobConfig& config) {
  const BuiltProblem& problem = *config.problem;
  if (!config.spec.measure.placement.device.empty()) return ChosenPlacement{config.spec.measure.placement, "the submitted placement", false};
  auto best = ask_store<StoredBest>(self, config.store, get_best_atom::value, fingerprint(problem.graph), problem.runtime);
  if (!best) return best.error();
  if (!best.value().error.empty()) return make_error("reading the stored best: " + best.value().error);
  if (!best.value().found || best.value().record.is_pipeline())
    return make_error("no stored best for " + problem.spec.graph_label + " on " + problem.cluster.name() +
                      " with these simulator options (tune it first)");
  const ScheduleRecord& r = best.value().record;
  return ChosenPlacement{r.placement, "the stored best (" + r.method + ", " + r.job_id + ")", true};
}

// Records what the run taught: its measurement with the stored best it ran, its times in the
// profiles. A failure here loses no measurement (the report has it) and is said in the warnings.
void record(caf::scoped_actor& self, const MeasureJobConfig& config, const ChosenPlacement& chosen, MeasureJobReport& report) {
  const BuiltProblem& problem = *config.problem;
  const MeasureAnswer& a = report.measured.answer;
  const auto note = [&](const std::string& what) { report.warnings += (report.warnings.empty() ? "" : "; ") + what; };
  if (chosen.best) {
    StoredMeasurement m{fingerprint(problem.graph), problem.runtime, chosen.placement, a.median,
                        static_cast<int>(a.makespans.size()), a.backend};
    auto kept = ask_store<StoreReply>(self, config.store, put_measurement_atom::value, m);
    if (!kept) note("not recorded with the best: " + kept.error().message);
    else if (!kept.value().ok) note("not recorded with the best: " + kept.value().error);
    else if (!kept.value().stored) note("the stored best changed while it ran; not recorded with it");
    else report.recorded = true;
  }
  auto added = ask_store<StoreReply>(self, config.store, add_profiles_atom::value, a.profile_samples);
  if (!added) note("not added to the profiles: " + added.error().message);
  else if (!added.value().ok) note("not added to the profiles: " + added.value().error);
}

std::string time_text(double value, const std::string& unit) {
  char text[48];
  if (unit == "s") std::snprintf(text, sizeof text, "%.4g ms", value * 1e3);
  else std::snprintf(text, sizeof text, "%.6g %s", value, unit.c_str());
  return text;
}

TuneOutcome outcome_of(const MeasureJobConfig& config, const Result<MeasureJobReport>& report) {
  TuneOutcome o;
  o.job_id = config.job_id;
  o.best.method = "measure";
  if (config.problem) {
    o.graph = fingerprint(config.problem->graph);
    o.runtime = config.problem->runtime;
  }
  if (!report) {
    o.state = config.stop->load() ? JobState::cancelled : JobState::failed;
    o.stop_reason = report.error().message;
    return o;
  }
  const MeasureJobReport& r = report.value();
  const MeasureAnswer& a = r.measured.answer;
  o.best.makespan = a.median;
  o.evaluations = static_cast<long>(a.makespans.size());
  o.seconds = 0;
  std::string text = "measured " + time_text(a.median, "s") + " (median of " + std::to_string(a.makespans.size()) +
                     " runs, min " + time_text(a.min, "s") + ", max " + time_text(a.max, "s") + ") on worker " +
                     r.measured.worker + ", " + a.backend + " backend; " + r.placement_source + "; simulated " +
                     time_text(r.simulated, r.unit);
  if (r.unit == "s" && a.median > 0) {
    char error[32];
    std::snprintf(error, sizeof error, " (%+.1f%%)", 100 * (r.simulated / a.median - 1));
    text += error;
  }
  if (r.recorded) text += "; recorded with the stored best";
  if (!r.warnings.empty()) text += "; " + r.warnings;
  o.stop_reason = text;
  return o;
}

}  // namespace

Status check_measure_job_spec(const JobSpec& spec) {
  if (spec.problem.is_pipeline()) return make_error("a measure job runs a graph placement, not a pipeline problem");
  if (spec.measure.repeats < 1 || spec.measure.repeats > 1000) return make_error("--repeats must be between 1 and 1000");
  if (spec.measure.warmup < 0 || spec.measure.warmup > 1000) return make_error("--warmup must be between 0 and 1000");
  return Ok{};
}

Result<MeasureJobReport> run_measure_job(caf::actor_system& system, const MeasureJobConfig& config) {
  if (Status ok = check_measure_job_spec(config.spec); !ok) return ok.error();
  if (!config.problem || !config.problem->costs) return make_error("a measure job needs a built graph problem");
  const BuiltProblem& problem = *config.problem;
  caf::scoped_actor self{system};
  auto chosen = choose_placement(self, config);
  if (!chosen) return chosen.error();
  if (auto valid = chosen.value().placement.check(problem.graph, problem.cluster, chosen.value().source); !valid)
    return valid.error();
  MeasureJobReport report;
  report.placement_source = chosen.value().source;
  report.unit = problem.graph.cost_unit();
  report.simulated = Simulator(problem.graph, *problem.costs, problem.cluster, problem.sim).run(chosen.value().placement).makespan;
  PoolMeasurer measurer(system, config.pool, config.job_id, {config.problem}, config.spec.priority, config.spec.measure,
                        [stop = config.stop] { return stop->load(); }, config.wait_for_worker_seconds);
  measurer.report_status(config.hooks.on_status);
  auto measured = measurer.measure(chosen.value().placement);
  if (!measured) return measured.error();
  report.measured = std::move(measured).value();
  record(self, config, chosen.value(), report);
  return report;
}

caf::actor spawn_measure_job(caf::actor_system& system, MeasureJobConfig config) {
  const auto stop = config.stop;
  return spawn_blocking_job(system, [&system, config = std::move(config)] {
    return outcome_of(config, run_measure_job(system, config));
  }, stop);
}

}  // namespace gantry
