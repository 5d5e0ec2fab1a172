// gantry-exec: the executor alone, for machines that have LibTorch (a CUDA one for the GPU backend)
// but not the rest of gantry's stack. It reads a graph (gantry JSON, with operations) and a
// placement (JSON, as `gantry place -f json` or `gantry query export` write them), runs the
// placement on N devices of one backend, and writes the measurement as JSON. Build:
// executor/standalone/CMakeLists.txt.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <thread>
#ifdef __linux__
#include <poll.h>
#endif
#include <unistd.h>

#include "core/cluster.hpp"
#include "core/graph_io.hpp"
#include "core/json_util.hpp"
#include "core/operation.hpp"
#include "core/placement.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/cuda/cuda_executor.hpp"
#include "executor/measurement_json.hpp"
#include "executor/profile_samples.hpp"

namespace {

using namespace gantry;

const char* const kUsage =
    "usage: gantry-exec --graph GRAPH.json --placement PLACEMENT.json [--backend cpu|cuda] [--devices N]\n"
    "                   [--streams S|S0,S1,...] [--partition streams|sms] [--repeats K] [--warmup W] [--no-pin]\n"
    "                   [--out MEASUREMENT.json] [--profile-out PROFILES.json [--device-kind KIND]]\n"
    "Runs the placement for real: N devices (default: the placement's highest device + 1), each with S streams\n"
    "(default 1; with a list, device d has Sd); on cuda, device d runs on GPU d mod the GPUs present (one GPU:\n"
    "D partitions of it). Prints the measurement as JSON (docs/formats.md: median, min, max and every timed\n"
    "makespan in seconds, the median run's ops and transfers).\n"
    "  --partition sms    on cuda, the devices that share a GPU get disjoint sets of its SMs (green contexts,\n"
    "                     CUDA 12.5 or later; one stream per device) instead of sharing all of them (streams)\n"
    "  --profile-out F    also write the median run's op times as profile samples (the profiles JSON of\n"
    "                     docs/formats.md), for `gantry profile --import F` where the store is; the placement\n"
    "                     must use one device (the samples are solo times)\n"
    "  --device-kind K    the device kind the samples are filed under: the kind of the cluster file whose\n"
    "                     simulations they should cost (default CPU on cpu, GPU on cuda)\n"
    "  --check            also run every op once on one device of the CPU backend and compare the last timed\n"
    "                     run's outputs with that run's\n"
    "                     (exit 1 when a value differs by more than 1e-3 of their scale, 5e-2 with bfloat16 ops)\n"
    "  --copy-engines E|E0,E1,...  1: the devices copy to others with copy engines, beside their compute;\n"
    "                     0: each copies its outputs itself (default 1 on cuda, 0 on cpu)\n"
    "  --serve            run requests from stdin, one per line (a JSON array of a run's arguments, with --out;\n"
    "                     [\"--devices-visible\"] for the device count), each answered by a line on stdout:\n"
    "                     {\"status\": 0} or {\"status\": 1, \"error\": ...}; ends after the last one\n"
    "  --end-with-stdin   with --serve: end at once when stdin's other end closes, in a run too (how gantry\n"
    "                     starts it: a gantry that ended leaves no run behind; requests not yet read are lost)\n"
    "  --devices-visible  print the CUDA devices this build sees and exit\n";

struct Args {
  std::string graph, placement, backend = "cpu", out, profile_out, device_kind;
  int devices = 0, repeats = 5, warmup = 1;
  std::vector<int> streams{1};  // one count for every device, or one per device
  std::vector<int> copy_engines;  // likewise, 0 or 1; empty: the backend's default
  bool pin = true, list_devices = false, check = false, sm_partitions = false, serve = false, end_with_stdin = false;
};

// What ends a run (or, serving, one request) with an error message.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& message) { throw Failure(message); }

int whole(const std::string& flag, const std::string& text, int low, int high) {
  try {
    std::size_t used = 0;
    const int value = std::stoi(text, &used);
    if (used == text.size() && value >= low && value <= high) return value;
  } catch (const std::exception&) {
  }
  fail(flag + " " + text + ": expected a whole number from " + std::to_string(low) + " to " + std::to_string(high));
}

// FLAG V or V0,V1,...: one value for every device, or one per device in turn.
std::vector<int> per_device(const std::string& flag, const std::string& text, int low, int high) {
  std::vector<int> values;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) values.push_back(whole(flag, item, low, high));
  if (values.empty() || text.back() == ',') fail(flag + " " + text + ": expected one value, or one per device (V0,V1,...)");
  return values;
}

// A per-device list's value for device d of `devices`.
int for_device(const std::string& flag, const std::vector<int>& values, int d, int devices) {
  if (values.size() > 1 && static_cast<int>(values.size()) != devices)
    fail(flag + " lists " + std::to_string(values.size()) + " values; the run has " + std::to_string(devices) + " devices");
  return values.size() == 1 ? values[0] : values[static_cast<std::size_t>(d)];
}

// The arguments of a run (or, `serving`, of one request: no --help, which would exit).
Args parse(const std::vector<std::string>& argv, bool serving = false) {
  Args a;
  const std::size_t argc = argv.size();
  for (std::size_t i = 0; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--graph") a.graph = value();
    else if (flag == "--placement") a.placement = value();
    else if (flag == "--backend") a.backend = value();
    else if (flag == "--out") a.out = value();
    else if (flag == "--profile-out") a.profile_out = value();
    else if (flag == "--device-kind") a.device_kind = value();
    else if (flag == "--devices") a.devices = whole(flag, value(), 1, kMaxDevices);
    else if (flag == "--streams") a.streams = per_device(flag, value(), 1, kMaxStreams);
    else if (flag == "--copy-engines") a.copy_engines = per_device(flag, value(), 0, 1);
    else if (flag == "--repeats") a.repeats = whole(flag, value(), 1, 1000);
    else if (flag == "--warmup") a.warmup = whole(flag, value(), 0, 1000);
    else if (flag == "--no-pin") a.pin = false;
    else if (flag == "--partition") {
      const std::string how = value();
      if (how != "sms" && how != "streams") fail("--partition " + how + ": expected streams or sms");
      a.sm_partitions = how == "sms";
    }
    else if (flag == "--devices-visible") a.list_devices = true;
    else if ((flag == "--serve" || flag == "--end-with-stdin") && serving)
      fail("a request runs a placement: --serve and --end-with-stdin are the server's");
    else if (flag == "--serve") a.serve = true;
    else if (flag == "--end-with-stdin") a.end_with_stdin = true;
    else if (flag == "--check") a.check = true;
    else if ((flag == "-h" || flag == "--help") && serving) fail("a request runs a placement; --help is the command line's");
    else if (flag == "-h" || flag == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else {
      fail("unknown flag " + flag + "\n" + kUsage);
    }
  }
  if (a.list_devices || a.serve) return a;
  if (a.graph.empty() || a.placement.empty()) fail(std::string("--graph and --placement are required\n") + kUsage);
  if (a.backend != "cpu" && a.backend != "cuda") fail("--backend " + a.backend + ": expected cpu or cuda");
  if (a.sm_partitions && a.backend != "cuda") fail("--partition sms needs --backend cuda (SMs are a GPU's)");
  if (!a.device_kind.empty() && a.profile_out.empty()) fail("--device-kind " + a.device_kind + " needs --profile-out");
  return a;
}

// N devices of the backend's kind, links free (no throttling: the copies are real); by default CPU
// cores have no copy engine (they make their own copies, as in the cpu-2 preset) and GPUs have.
Cluster devices_of(const Args& a, const Placement& placement) {
  int devices = a.devices;
  for (std::int32_t d : placement.device) devices = std::max(devices, static_cast<int>(d) + 1);
  std::vector<Device> list;
  for (int d = 0; d < devices; ++d) {
    Device device;
    device.name = a.backend + std::to_string(d);
    device.kind = !a.device_kind.empty() ? a.device_kind : a.backend == "cuda" ? "GPU" : "CPU";
    device.streams = for_device("--streams", a.streams, d, devices);
    device.copy_engine = a.copy_engines.empty() ? a.backend == "cuda" : for_device("--copy-engines", a.copy_engines, d, devices) == 1;
    list.push_back(device);
  }
  return Cluster(a.backend + "-" + std::to_string(devices), std::move(list));
}

Result<Measurement> run_on(const std::string& backend, const Graph& graph, const Placement& placement,
                           const Cluster& cluster, const ExecOptions& options) {
  return backend == "cuda" ? execute_on_cuda(graph, placement, cluster, options)
                           : execute_on_cpu(graph, placement, cluster, options);
}

// bfloat16 keeps 8 significant bits (a GPU's reduced-precision GEMMs round differently from the
// CPU's), float32 24.
double tolerance(const Graph& graph) {
  for (OpId op = 0; op < graph.size(); ++op)
    if (const Operation* operation = graph.operation(op); operation && operation->dtype == DType::bf16) return 5e-2;
  return 1e-3;
}

// The outputs of the last timed run against one run of every op on one device of the CPU backend
// (whose values the test suite checks against unblocked ATen computations): what the placement's
// devices, transfers and backend computed against the plainest way to compute it. NaN or infinity
// where the CPU has a finite value (or the reverse) is a difference.
nlohmann::json check_outputs(const Args& a, const Graph& graph, const Cluster& cluster,
                             const Measurement& got, bool* match) {
  ExecOptions once;
  once.repeats = 1;
  once.warmup = 0;
  once.keep_outputs = true;
  once.pin_threads = a.pin;
  const Placement one_device{std::vector<std::int32_t>(static_cast<std::size_t>(graph.size()), 0), {}};
  auto want = run_on("cpu", graph, one_device, cluster, once);
  if (!want) fail("--check on the CPU backend: " + want.error().message);
  double difference = 0, scale = 1;
  std::size_t values = 0, unequal = 0;
  const double tol = tolerance(graph);
  for (const OutputTensor& w : want.value().outputs)
    for (double y : w.values)
      if (std::isfinite(y)) scale = std::max(scale, std::abs(y));
  for (std::size_t i = 0; i < want.value().outputs.size(); ++i) {
    const auto &x = got.outputs[i].values, &y = want.value().outputs[i].values;
    if (x.size() != y.size()) fail("--check: output " + graph.name(want.value().outputs[i].op) + " has another shape");
    for (std::size_t k = 0; k < y.size(); ++k) {
      const double d = std::abs(x[k] - y[k]);
      const bool same = std::isfinite(x[k]) == std::isfinite(y[k]) && (!std::isfinite(y[k]) || d <= tol * scale);
      unequal += !same;
      if (std::isfinite(d)) difference = std::max(difference, d);
    }
    values += y.size();
  }
  *match = unequal == 0;
  return {{"outputs", want.value().outputs.size()}, {"values", values}, {"unequal", unequal},
          {"max_abs_difference", difference}, {"scale", scale}, {"tolerance", tol}, {"match", *match}};
}

// One run as the arguments ask: 0, or 1 when --check found the outputs differ; Failure on an error.
int run_once(const Args& args) {
  auto graph = read_graph_file(args.graph);
  if (!graph) fail(graph.error().message);
  auto placement = read_placement_file(args.placement);
  if (!placement) fail(placement.error().message);
  const Cluster cluster = devices_of(args, placement.value().placement);
  // Profiles keep solo op times and the links of a cluster file: ops timed beside other devices of
  // this machine (GPU partitions, cores) are not solo, and copies within it are no cluster's links.
  const std::set<std::int32_t> used(placement.value().placement.device.begin(), placement.value().placement.device.end());
  if (!args.profile_out.empty() && used.size() > 1)
    fail("--profile-out needs a placement on one device (this one uses " + std::to_string(used.size()) +
         "): times measured beside other devices are not the solo times profiles keep");
  ExecOptions options;
  options.repeats = args.repeats;
  options.warmup = args.warmup;
  options.pin_threads = args.pin;
  options.sm_partitions = args.sm_partitions;
  options.keep_outputs = args.check;  // the last timed run's outputs are the ones checked
  std::cerr << "gantry-exec: " << graph.value().size() << " ops on " << cluster.size() << " " << args.backend
            << " devices, " << args.warmup << " warm-up and " << args.repeats << " timed runs\n";
  auto measured = run_on(args.backend, graph.value(), placement.value().placement, cluster, options);
  if (!measured) fail(measured.error().message);
  nlohmann::json report = nlohmann::json::parse(measurement_to_json(graph.value(), cluster.size(), measured.value()));
  bool match = true;
  if (args.check)
    report["check"] = check_outputs(args, graph.value(), cluster, measured.value(), &match);
  if (!args.profile_out.empty()) {
    ProfileTable samples;
    add_profile_samples(graph.value(), cluster, measured.value().median_run, &samples);
    if (Status written = write_text_file(args.profile_out, profiles_to_json(samples) + "\n"); !written)
      fail("--profile-out: " + written.error().message);
    report["profile_samples"] = {{"file", args.profile_out}, {"entries", samples.size()}, {"device_kind", cluster.device(0).kind}};
  }
  const std::string text = report.dump(2) + "\n";
  if (args.out.empty()) {
    std::cout << text;
  } else {
    if (Status written = write_text_file(args.out, text); !written) fail("--out: " + written.error().message);
  }
  if (!match) std::cerr << "gantry-exec: the outputs differ from the CPU backend's (see \"check\")\n";
  return match ? 0 : 1;
}

// --end-with-stdin: the process ends as soon as its stdin's other end is closed (the gantry that
// started it ended, even killed), also in the middle of a run, so no orphaned run keeps a GPU busy.
// (The parent-death signal follows the thread that started a process, not its process.) Not by
// default: requests piped in from a file would be lost when their writer closes.
void end_with_stdin() {
#ifdef __linux__
  std::thread([] {
    pollfd hangup{0, POLLRDHUP, 0};  // POLLHUP and POLLERR are always reported
    while (poll(&hangup, 1, -1) < 0 && errno == EINTR) {
    }
    _exit(1);
  }).detach();
#endif
}

// --serve: runs requests one after another, each a line of stdin holding a JSON array of the
// arguments of one run (with --out), each answered by a line of stdout, {"status": 0} or
// {"status": 1, "error": "..."}; the request ["--devices-visible"] is answered {"status": 0,
// "devices": N}. Anything else written to stdout (a library's messages) goes to stderr: only the
// answers use the real stdout. One process then serves every measurement of a gantry, which pays
// LibTorch's load and a GPU's start once.
int serve(bool end_with_its_stdin) {
  if (end_with_its_stdin) end_with_stdin();
  const int answers = dup(1);
  FILE* out = answers < 0 ? nullptr : fdopen(answers, "w");
  if (!out) fail("--serve: cannot keep stdout for the answers");
  dup2(2, 1);
  for (std::string line; std::getline(std::cin, line);) {
    nlohmann::json answer;
    try {
      const auto request = nlohmann::json::parse(line);
      if (!request.is_array()) fail("a request is a JSON array of arguments");
      const Args args = parse(request.get<std::vector<std::string>>(), /*serving=*/true);
      if (args.list_devices) {
        answer = {{"status", 0}, {"devices", cuda_device_count()}};
      } else {
        if (args.out.empty()) fail("a request needs --out (stdout carries the answers)");
        answer = run_once(args) == 0 ? nlohmann::json{{"status", 0}}
                                     : nlohmann::json{{"status", 1}, {"error", "the outputs differ from the CPU backend's (see \"check\" in " + args.out + ")"}};
      }
    } catch (const std::exception& e) {  // Failure, a JSON or LibTorch error: this request's
      answer = {{"status", 1}, {"error", e.what()}};
    }
    const std::string text = json_text(answer) + "\n";
    std::fputs(text.c_str(), out);
    std::fflush(out);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args = parse(std::vector<std::string>(argv + 1, argv + argc));
    if (args.list_devices) {
      std::cout << cuda_device_count() << "\n";
      return 0;
    }
    if (args.serve) return serve(args.end_with_stdin);
    return run_once(args);
  } catch (const Failure& failure) {
    std::cerr << "gantry-exec: " << failure.what() << "\n";
    return 1;
  }
}
