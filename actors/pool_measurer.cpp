#include "actors/pool_measurer.hpp"

#include <algorithm>
#include <chrono>

#include "core/deadline.hpp"
#include "actors/messages.hpp"
#include "actors/problem_spec.hpp"
#include "sim/simulator.hpp"

namespace gantry {

PoolMeasurer::PoolMeasurer(caf::actor_system& system, caf::actor pool, std::string job,
                           std::vector<std::shared_ptr<const BuiltProblem>> problems, int priority,
                           MeasureRequest settings, std::function<bool()> should_stop, double wait_for_worker_seconds)
    : pool_(pool),
      problems_(std::move(problems)),
      settings_(std::move(settings)),
      should_stop_(std::move(should_stop)),
      wait_for_worker_seconds_(wait_for_worker_seconds),
      tasks_(system, pool, std::move(job), priority) {
  for (const auto& problem : problems_) caf::anon_send(pool_, add_problem_atom::value, problem->spec);
}

PoolMeasurer::~PoolMeasurer() {
  tasks_.withdraw();
  for (const auto& problem : problems_) caf::anon_send(pool_, drop_problem_atom::value, problem->key);
}

bool PoolMeasurer::offered() const {
  for (const auto& problem : problems_)
    if (tasks_.slots(measure_kind(problem->cluster)) == 0) return false;
  return true;
}

// How long a measurement may take on its worker: its runs at ten times the simulated makespan
// (when the costs are in seconds), plus a minute for building the graph's tensors and threads.
double time_limit(const BuiltProblem& problem, const Placement& placement, const MeasureRequest& request) {
  if (problem.graph.cost_unit() != "s") return 0;  // the pool's lease alone bounds it
  const double makespan = Simulator(problem.graph, *problem.costs, problem.cluster, problem.sim).makespan(placement);
  return std::min(60 + 10 * makespan * (request.warmup + request.repeats), kLongestWait);
}

Result<PoolMeasurement> PoolMeasurer::measure(int problem, const Placement& placement) {
  const BuiltProblem& built = *problems_.at(static_cast<std::size_t>(problem));
  const std::string kind = measure_kind(built.cluster);
  MeasureRequest request = settings_;
  request.placement = placement;
  RolloutTask task;
  task.kind = kind;
  task.problem = built.key;
  task.body = encode_body(request);
  task.seconds = time_limit(built, placement, request);
  task.sequence = ++sequence_;
  tasks_.submit(std::move(task), sequence_);
  // It waits in the pool's queue while no worker offers the devices (none has yet, or the one that
  // did left and its lease came back): for wait_for_worker_seconds at most each time.
  bool ever_offered = false, waiting = false;
  auto offered_last = std::chrono::steady_clock::now();
  const std::string waited = std::to_string(static_cast<int>(wait_for_worker_seconds_)) + " s";
  const std::string start_one = "start one with `gantry worker --devices " + kind.substr(kind.find(':') + 1) +
                                "` on the machine to measure on";
  const auto say = [&](const std::string& line) {
    if (status_) status_(line);
  };
  for (;;) {
    if (should_stop_ && should_stop_()) {
      tasks_.withdraw();
      return make_error("stopped while a measurement was queued or running");
    }
    const auto now = std::chrono::steady_clock::now();
    const bool offered_now = tasks_.slots(kind) > 0;
    if (offered_now) {
      ever_offered = true;
      offered_last = now;
    } else if (std::chrono::duration<double>(now - offered_last).count() > wait_for_worker_seconds_) {
      tasks_.withdraw();
      if (!ever_offered) return make_error("no worker offers " + kind + " within " + waited + " (" + start_one + ")");
      return make_error("no worker offering " + kind + " had a free slot within " + waited +
                        " (the one that did left, or is still running a measurement given up on)");
    }
    if (waiting == offered_now) {  // the wait for a worker begins or ends
      waiting = !offered_now;
      say(waiting ? "waiting up to " + waited + " for a worker offering " + kind + " (" + start_one + ")"
                  : "a worker offers " + kind + ": the measurement is queued or running there");
    }
    auto answer = tasks_.next(0.1);
    if (!answer) continue;
    if (answer->tag < 0) return answer->result.error();  // the pool stopped: nothing more comes
    if (answer->tag != sequence_) continue;  // a withdrawn earlier one
    if (!answer->result) return make_error("the rollout pool failed the measurement: " + answer->result.error().message);
    const TaskResult& r = answer->result.value();
    if (r.withdrawn) return make_error("the measurement was withdrawn");
    if (!r.error.empty()) return make_error("measuring on worker " + r.worker + ": " + r.error);
    auto decoded = decode_measure_answer(r.body);
    if (!decoded) return decoded.error();
    if (store_) caf::anon_send(store_, add_profiles_atom::value, decoded.value().profile_samples);
    return PoolMeasurement{std::move(decoded).value(), r.worker};
  }
}

}  // namespace gantry
