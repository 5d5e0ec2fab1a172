#pragma once
// Measurements through the rollout pool: each placement to measure becomes a measure:cpu:N task
// (actors/measure_task.hpp) that the pool leases to a worker offering N executor devices, in this
// process (the embedded cluster) or on another host. A job's thread blocks in measure() until the
// answer comes, the job is stopped, or no worker offers the devices within the wait.
#include <caf/all.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/measure_task.hpp"
#include "actors/pool_task_queue.hpp"

namespace gantry {

struct BuiltProblem;

struct PoolMeasurement {
  MeasureAnswer answer;
  std::string worker;  // where it ran
};

class PoolMeasurer {
 public:
  // `problems` are registered with the pool here (workers fetch them) and dropped at the end.
  // `settings`: repeats, warm-up and link options of every measurement (its placement is unused).
  // `should_stop` is polled while waiting; `wait_for_worker_seconds` bounds the wait for a worker
  // that offers the devices when none does.
  PoolMeasurer(caf::actor_system& system, caf::actor pool, std::string job,
               std::vector<std::shared_ptr<const BuiltProblem>> problems, int priority, MeasureRequest settings,
               std::function<bool()> should_stop, double wait_for_worker_seconds = 30);
  ~PoolMeasurer();  // withdraws what is still queued and drops the problems

  // From now on every measurement's op and transfer times go to `store`'s profiles.
  void teach_profiles(caf::actor store) { store_ = std::move(store); }
  // Lines saying what a measurement waits for, as the wait begins and ends: no worker offers its
  // devices (how to start one), then one does.
  void report_status(std::function<void(const std::string&)> status) { status_ = std::move(status); }

  // Whether a live worker offers the devices of every problem now (executors are attached).
  bool offered() const;
  // The job is being stopped: measure() refuses, and a refusal is not a failure.
  bool stopping() const { return should_stop_ && should_stop_(); }

  Result<PoolMeasurement> measure(int problem, const Placement& placement);
  Result<PoolMeasurement> measure(const Placement& placement) { return measure(0, placement); }

 private:
  caf::actor pool_;
  std::vector<std::shared_ptr<const BuiltProblem>> problems_;
  MeasureRequest settings_;
  std::function<bool()> should_stop_;
  double wait_for_worker_seconds_;
  PoolTaskQueue tasks_;
  caf::actor store_;
  std::function<void(const std::string&)> status_;
  long sequence_ = 0;
};

}  // namespace gantry
