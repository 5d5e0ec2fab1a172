#pragma once
// The `measure` task kinds: run a placement for real on a worker's executor devices and answer
// with the measured makespans and the run's profile samples. A kind names the device set it needs,
// "measure:BACKEND:N": N CPU devices (one core each) or N devices on the GPUs; a worker started with
// `--devices cpu:K` (or cuda:K) runs the kinds for N = 1..K of its backend, so the pool leases a
// measurement only to a worker with the backend and enough devices. A cluster whose devices are
// all of kind CPU is measured on the cpu backend, any other on cuda. The
// worker runs a measurement alone: it lets its running rollouts finish first and starts nothing
// else until the measurement ends (actors/worker_actor.cpp), so no other thread of it shares the
// cores being timed.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/rollout_task.hpp"
#include "actors/task_kinds.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"

namespace gantry {

struct BuiltProblem;
struct SlotScratch;
class Cluster;
class MsgpackWriter;
namespace wire {
struct Decoder;
}

// A worker's executor devices: none, K CPU devices, or K devices on its GPUs.
struct ExecutorDevices {
  ExecutorDevices() = default;
  ExecutorDevices(std::string backend, int count, std::string program = "")
      : backend(std::move(backend)), count(count), program(std::move(program)) {}

  std::string backend = "cpu";  // "cpu" or "cuda"
  int count = 0;
  // Empty: this process's executors measure. Else a gantry-exec program that measures for it
  // (executor/external_executor.hpp): how a gantry whose LibTorch has no CUDA measures on GPUs.
  std::string program;
  // With a program: the GPUs it sees (cuda), asked once when the devices are set up.
  int program_gpus = 0;

  // The GPUs measurements run on: the program's, or this process's. Fewer than a cluster's
  // devices, and the devices are partitions of GPUs (executor/profile_samples.hpp).
  int gpus() const;
};

// "cpu" for a cluster whose devices are all of kind CPU, else "cuda".
std::string measure_backend(const Cluster& cluster);
// "measure:BACKEND:N": the kind that measures on N devices of the backend.
std::string measure_kind(const std::string& backend, int devices);
std::string measure_kind(const Cluster& cluster);  // the kind that measures placements on `cluster`
bool is_measure_kind(std::string_view kind);
// The kinds a worker with `devices` runs: measure:BACKEND:1 .. measure:BACKEND:count.
std::vector<std::string> measure_kinds(const ExecutorDevices& devices);
// The other way: "BACKEND:N" for the largest measure kind among `kinds` ("" when there is none).
std::string executor_devices_of(const std::vector<std::string>& kinds);

struct MeasureRequest {
  Placement placement;
  int repeats = 3;
  int warmup = 1;
  bool throttle_links = false;
  bool pin_threads = true;
};

struct MeasureAnswer {
  std::string backend;             // "cpu"
  std::vector<double> makespans;   // every timed run, seconds
  double median = 0, min = 0, max = 0;
  std::string profile_samples;     // the median run's op and transfer times (core/profile_table.hpp JSON)
};

// The request as a nested map of a larger message (a measurement job's spec), and read back.
void put_measure_request(MsgpackWriter& w, const MeasureRequest& request);
bool read_measure_request(wire::Decoder& d, const std::string& what, MeasureRequest& request);

std::string encode_body(const MeasureRequest& request);
std::string encode_body(const MeasureAnswer& answer);
Result<MeasureRequest> decode_measure_request(std::string_view body);
Result<MeasureAnswer> decode_measure_answer(std::string_view body);

// Runs the request's placement of the task's problem on the kind's executor (executor/cpu/,
// executor/cuda/), or through the devices' gantry-exec program when they name one (stopped past
// the task's time limit). On GPUs fewer than the cluster's devices the answer has no profile
// samples: partitions of a GPU time the ops slower than the cluster's device would run them.
Result<std::string> run_measure_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                     const ExecutorDevices& devices);

// The task kind that runs every measure:BACKEND:N task on `devices` (a worker's rollout slots).
TaskKind measure_task_kind(const ExecutorDevices& devices);

}  // namespace gantry
