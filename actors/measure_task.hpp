#pragma once
// The `measure` task kinds: run a placement for real on a worker's executor devices and answer
// with the measured makespans and the run's profile samples. A kind names the device set it needs,
// "measure:cpu:N" (N CPU devices, one core each): a worker started with `--devices cpu:K` runs the
// kinds for N = 1..K, so the pool leases a measurement only to a worker with enough devices. The
// worker runs a measurement alone: it lets its running rollouts finish first and starts nothing
// else until the measurement ends (actors/worker_actor.cpp), so no other thread of it shares the
// cores being timed.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/rollout_task.hpp"
#include "core/placement.hpp"
#include "core/result.hpp"

namespace gantry {

struct BuiltProblem;
struct SlotScratch;
class MsgpackWriter;
namespace wire {
struct Decoder;
}

inline constexpr const char* kMeasureTaskPrefix = "measure:";

// "measure:cpu:N": the kind that measures on N CPU devices.
std::string measure_kind(int devices);
bool is_measure_kind(std::string_view kind);
// The kinds a worker with `cpu_devices` CPU devices runs: measure:cpu:1 .. measure:cpu:cpu_devices.
std::vector<std::string> measure_kinds(int cpu_devices);

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

// Runs the request's placement of the task's problem on the CPU executor (executor/cpu/).
Result<std::string> run_measure_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                     std::unique_ptr<SlotScratch>& scratch);

}  // namespace gantry
