#include "actors/measure_task.hpp"

#include <charconv>

#include "actors/net/msgpack_fields.hpp"
#include "actors/problem_spec.hpp"
#include "core/cluster.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/cuda/cuda_executor.hpp"
#include "executor/external_executor.hpp"
#include "executor/profile_samples.hpp"

namespace gantry {

namespace {

using wire::Decoder;
using wire::entry;
using wire::get;
using wire::Writer;

const char* const kRequestFields[] = {"placement", "repeats", "warmup", "throttle_links", "pin_threads"};
const char* const kAnswerFields[] = {"backend", "makespans", "median", "min", "max", "profile_samples"};
constexpr std::string_view kPrefix = "measure:";

// A measure kind's backend and device count; count 0 when `kind` is not one.
std::pair<std::string, int> parse_kind(std::string_view kind) {
  if (kind.substr(0, kPrefix.size()) != kPrefix) return {"", 0};
  kind.remove_prefix(kPrefix.size());
  const auto colon = kind.find(':');
  if (colon == std::string_view::npos) return {"", 0};
  const std::string backend(kind.substr(0, colon));
  if (backend != "cpu" && backend != "cuda") return {"", 0};
  const std::string_view count = kind.substr(colon + 1);
  int n = 0;
  const auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), n);
  if (error != std::errc() || end != count.data() + count.size() || n < 1) return {"", 0};
  return {backend, n};
}

}  // namespace

std::string measure_backend(const Cluster& cluster) { return is_cpu_cluster(cluster) ? "cpu" : "cuda"; }

std::string measure_kind(const std::string& backend, int devices) {
  return std::string(kPrefix) + backend + ":" + std::to_string(devices);
}

std::string measure_kind(const Cluster& cluster) { return measure_kind(measure_backend(cluster), cluster.size()); }

bool is_measure_kind(std::string_view kind) { return parse_kind(kind).second > 0; }

std::vector<std::string> measure_kinds(const ExecutorDevices& devices) {
  std::vector<std::string> kinds;
  for (int n = 1; n <= devices.count; ++n) kinds.push_back(measure_kind(devices.backend, n));
  return kinds;
}

void put_measure_request(MsgpackWriter& w, const MeasureRequest& r) {
  w.map(5);
  entry(w, "placement", r.placement);
  entry(w, "repeats", r.repeats);
  entry(w, "warmup", r.warmup);
  entry(w, "throttle_links", r.throttle_links);
  entry(w, "pin_threads", r.pin_threads);
}

bool read_measure_request(Decoder& d, const std::string& what, MeasureRequest& r) {
  const bool read = wire::read_object(d, what, kRequestFields, [&](std::string_view key) -> const char* {
    if (key == "placement") return get(d, r.placement, what + ".placement");
    if (key == "repeats") return get(d, r.repeats);
    if (key == "warmup") return get(d, r.warmup);
    if (key == "throttle_links") return get(d, r.throttle_links);
    return get(d, r.pin_threads);
  });
  if (read && (r.repeats < 1 || r.warmup < 0)) {
    d.error = what + ": repeats must be >= 1 and warmup >= 0";
    return false;
  }
  return read;
}

std::string encode_body(const MeasureRequest& r) {
  Writer w;
  put_measure_request(w, r);
  return w.take();
}

std::string encode_body(const MeasureAnswer& a) {
  Writer w;
  w.map(6);
  entry(w, "backend", a.backend);
  entry(w, "makespans", a.makespans);
  entry(w, "median", a.median);
  entry(w, "min", a.min);
  entry(w, "max", a.max);
  entry(w, "profile_samples", a.profile_samples);
  return w.take();
}

std::string executor_devices_of(const std::vector<std::string>& kinds) {
  std::pair<std::string, int> largest{"", 0};
  for (const std::string& kind : kinds)
    if (auto parsed = parse_kind(kind); parsed.second > largest.second) largest = parsed;
  return largest.second > 0 ? largest.first + ":" + std::to_string(largest.second) : "";
}

Result<MeasureRequest> decode_measure_request(std::string_view body) {
  return wire::read_value<MeasureRequest>(body, "measure request", read_measure_request);
}

Result<MeasureAnswer> decode_measure_answer(std::string_view body) {
  auto a = wire::read_body<MeasureAnswer>(body, "measure answer", kAnswerFields,
                                          [](Decoder& d, MeasureAnswer& a, std::string_view key) -> const char* {
                                            if (key == "backend") return get(d, a.backend);
                                            if (key == "makespans") return get(d, a.makespans);
                                            if (key == "median") return get(d, a.median);
                                            if (key == "min") return get(d, a.min);
                                            if (key == "max") return get(d, a.max);
                                            return get(d, a.profile_samples);
                                          });
  if (a && (a.value().makespans.empty() || !(a.value().median > 0)))
    return make_error("measure answer: no timed run");
  return a;
}

Result<std::string> run_measure_task(const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                                     const ExecutorDevices& executor) {
  const auto [backend, devices] = parse_kind(task.kind);
  if (devices == 0) return make_error("'" + task.kind + "' is not a measure task kind");
  if (task.kind != measure_kind(problem->cluster))
    return make_error(task.kind + " task on cluster " + problem->cluster.name() + ", which is measured by " +
                      measure_kind(problem->cluster) + " tasks");
  auto request = decode_measure_request(task.body);
  if (!request) return request.error();
  const MeasureRequest& r = request.value();
  if (auto valid = r.placement.check(problem->graph, problem->cluster, "the placement to measure"); !valid) return valid.error();
  ExecOptions exec;
  exec.repeats = r.repeats;
  exec.warmup = r.warmup;
  exec.throttle_links = r.throttle_links;
  exec.pin_threads = r.pin_threads;
  auto measured = !executor.program.empty()
                      ? execute_through(executor.program, backend, problem->graph, r.placement, problem->cluster, exec,
                                        task.seconds)
                  : backend == "cuda" ? execute_on_cuda(problem->graph, r.placement, problem->cluster, exec)
                                      : execute_on_cpu(problem->graph, r.placement, problem->cluster, exec);
  if (!measured) return measured.error();
  const Measurement& m = measured.value();
  ProfileTable samples;
  std::vector<double> slowdowns;  // solo times, by the co-run slowdown of the profiles the problem is costed with
  for (int d = 0; d < problem->cluster.size(); ++d) slowdowns.push_back(problem->costs->co_run_slowdown(d));
  if (gives_profile_samples(backend, executor.gpus(), problem->cluster))
    add_profile_samples(problem->graph, problem->cluster, m.median_run, &samples, slowdowns);
  MeasureAnswer answer{m.backend, m.makespans, m.median, m.min, m.max, profiles_to_json(samples)};
  return encode_body(answer);
}

int ExecutorDevices::gpus() const { return program.empty() ? cuda_device_count() : program_gpus; }

TaskKind measure_task_kind(const ExecutorDevices& devices) {
  return {"measure", [devices](const std::shared_ptr<const BuiltProblem>& problem, const RolloutTask& task,
                               std::unique_ptr<SlotScratch>&) { return run_measure_task(problem, task, devices); }};
}

}  // namespace gantry
