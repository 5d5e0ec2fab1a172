// Measuring through a gantry-exec process (executor/external_executor.hpp): the run is
// gantry-exec's, read back in this process; what it cannot run and what goes wrong are named.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/cluster.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/cuda/cuda_executor.hpp"
#include "executor/external_executor.hpp"
#include "executor/measurement_json.hpp"
#include "core/json_util.hpp"
#include "tests/support/executor_cases.hpp"
#include "tests/support/recording_program.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

namespace {

using testing::small_ffnn;
using testing::spread;

Cluster cpu_cluster(int devices) {
  auto c = Cluster::load("cpu-" + std::to_string(devices));
  REQUIRE(c.ok());
  return std::move(c).value();
}

ExecOptions quick() {
  ExecOptions o;
  o.repeats = 3;
  o.warmup = 0;
  o.pin_threads = false;
  return o;
}

}  // namespace

TEST_CASE("a measurement through gantry-exec runs every op on its device after its inputs arrived", "[executor]") {
  const Graph g = small_ffnn();
  const Placement p = spread(g, 2);
  auto measured = execute_through(GANTRY_EXEC_BINARY, "cpu", g, p, cpu_cluster(2), quick());
  REQUIRE(measured.ok());
  const Measurement& m = measured.value();
  CHECK(m.backend == "cpu");
  REQUIRE(m.makespans.size() == 3);
  CHECK(m.min <= m.median);
  CHECK(m.median <= m.max);
  REQUIRE(m.median_run.ops.size() == static_cast<std::size_t>(g.size()));
  std::map<std::pair<OpId, int>, TransferRecord> arrival;  // (producer, destination) -> its copy
  for (const TransferRecord& t : m.median_run.transfers) arrival[{t.op, t.to}] = t;
  for (OpId op = 0; op < g.size(); ++op) {
    const OpRecord& r = m.median_run.ops[static_cast<std::size_t>(op)];
    CHECK(r.op == op);
    CHECK(r.device == p.device[static_cast<std::size_t>(op)]);
    CHECK(r.end <= m.median_run.makespan);
  }
  // The graph's edges, read here: an op starts after each input is on its device.
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const OpRecord& from = m.median_run.ops[static_cast<std::size_t>(g.edge_src(e))];
    const OpRecord& to = m.median_run.ops[static_cast<std::size_t>(g.edge_dst(e))];
    if (from.device == to.device) {
      CHECK(to.start >= from.end);
      continue;
    }
    const auto copy = arrival.find({g.edge_src(e), to.device});
    REQUIRE(copy != arrival.end());
    CHECK(copy->second.from == from.device);
    CHECK(copy->second.start >= from.end);
    CHECK(to.start >= copy->second.end);
  }
}

TEST_CASE("what gantry-exec cannot run, and a program that fails, are named", "[executor]") {
  const Graph g = small_ffnn();
  const Placement p = spread(g, 2);
  ExecOptions throttled = quick();
  throttled.throttle_links = true;
  auto refused = execute_through(GANTRY_EXEC_BINARY, "cpu", g, p, cpu_cluster(2), throttled);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("throttle"));

  auto mixed = Cluster::from_yaml(R"(name: half-cores
devices:
  - {kind: P100, name: gpu, peak_tflops: 9.3, mem_bandwidth_gbs: 732, memory_gib: 16}
  - {kind: CPU, name: core, peak_tflops: 0.05, mem_bandwidth_gbs: 10, memory_gib: 8}
default_link: {bandwidth_gbs: 5, latency_us: 1}
)", "mixed");
  REQUIRE(mixed.ok());
  auto both = execute_through(GANTRY_EXEC_BINARY, "cuda", g, p, mixed.value(), quick());
  REQUIRE_FALSE(both.ok());
  CHECK_THAT(both.error().message, Catch::Contains("mixes CPU cores and GPUs (device 1, core0)"));

  auto gpus = Cluster::load("4xP100-pcie");
  REQUIRE(gpus.ok());
  auto not_cores = execute_through(GANTRY_EXEC_BINARY, "cpu", g, p, gpus.value(), quick());
  REQUIRE_FALSE(not_cores.ok());
  CHECK_THAT(not_cores.error().message, Catch::Contains("is not a CPU core"));

  auto missing = execute_through("/nonexistent/gantry-exec", "cpu", g, p, cpu_cluster(2), quick());
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("cannot start /nonexistent/gantry-exec: No such file"));

  auto failing = execute_through("false", "cpu", g, p, cpu_cluster(2), quick());
  REQUIRE_FALSE(failing.ok());
  CHECK_THAT(failing.error().message, Catch::Contains("false exited with status 1"));

  // gantry-exec's own refusal reaches the caller: a CPU run asked for SM partitions.
  ExecOptions partitioned = quick();
  partitioned.sm_partitions = true;
  auto said = execute_through(GANTRY_EXEC_BINARY, "cpu", g, p, cpu_cluster(2), partitioned);
  REQUIRE_FALSE(said.ok());
  CHECK_THAT(said.error().message, Catch::Contains("--partition sms needs --backend cuda"));
}

using testing::recording_program;

TEST_CASE("gantry-exec runs the cluster's own stream counts and copy engines", "[executor]") {
  const testing::TempDir dir;
  const Graph g = small_ffnn();
  auto mixed = Cluster::from_yaml(R"(name: cpu-mixed
devices:
  - {kind: CPU, name: a, peak_tflops: 0.05, mem_bandwidth_gbs: 10, memory_gib: 8, streams: 1, copy_engine: true}
  - {kind: CPU, name: b, peak_tflops: 0.05, mem_bandwidth_gbs: 10, memory_gib: 8, streams: 2, copy_engine: false}
default_link: {bandwidth_gbs: 5, latency_us: 1}
)", "mixed");
  REQUIRE(mixed.ok());
  const std::string program = testing::recorded_gantry_exec(dir, GANTRY_EXEC_BINARY);
  auto measured = execute_through(program, "cpu", g, spread(g, 2), mixed.value(), quick());
  INFO((measured.ok() ? std::string() : measured.error().message));
  REQUIRE(measured.ok());
  const std::string calls = read_text_file(dir.file("calls")).value();
  CHECK_THAT(calls, Catch::Contains(R"("--streams","1,2")"));
  CHECK_THAT(calls, Catch::Contains(R"("--copy-engines","1,0")"));
  // On cpu-2 (one stream each, no copy engines: gantry-exec's defaults) one value and no list, a
  // request to the same server.
  REQUIRE(execute_through(program, "cpu", g, spread(g, 2), cpu_cluster(2), quick()).ok());
  const std::string both = read_text_file(dir.file("calls")).value();
  CHECK_THAT(both.substr(calls.size()), Catch::Contains(R"("--streams","1",)"));
  CHECK_THAT(both.substr(calls.size()), !Catch::Contains("--copy-engines"));
  CHECK(std::count(both.begin(), both.end(), '\n') == 3);  // started once (--serve ...), two requests
}

TEST_CASE("a run past its time limit is stopped; a measurement that is not the one asked for is refused", "[executor]") {
  const testing::TempDir dir;
  const Graph g = small_ffnn();
  const Placement p = spread(g, 2);
  const auto begin = std::chrono::steady_clock::now();
  const std::string sleeper = dir.file("sleeper");
  auto slow = execute_through(recording_program(dir, "slow.sh", "(sleep 60 & echo $! > " + sleeper + "; wait)"), "cpu", g,
                              p, cpu_cluster(2), quick(), 1);
  REQUIRE_FALSE(slow.ok());
  CHECK_THAT(slow.error().message, Catch::Contains("ran past the time limit of 1 s for a measurement"));
  CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(30));
  // The whole process group was stopped: the script's own children too.
  const int sleeping = std::stoi(read_text_file(sleeper).value());
  CHECK(testing::wait_until([&] { return testing::process_gone(sleeping); }, 5));

  // A program that answers with a prepared file: a real measurement, then with op 0 moved.
  auto real = execute_on_cpu(g, p, cpu_cluster(2), quick());
  REQUIRE(real.ok());
  Measurement moved = real.value();
  moved.median_run.ops[0].device = 1 - p.device[0];
  std::ofstream(dir.file("moved.json")) << measurement_to_json(g, 2, moved);
  // A server that answers every request with that file.
  const std::string answer = recording_program(
      dir, "answer.sh",
      "while IFS= read -r line; do out=$(printf '%s' \"$line\" | python3 -c 'import json, sys; a = json.load(sys.stdin); "
      "print(a[a.index(\"--out\") + 1])'); cp " + dir.file("moved.json") + " \"$out\"; echo '{\"status\": 0}'; done");
  auto wrong = execute_through(answer, "cpu", g, p, cpu_cluster(2), quick());
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.error().message, Catch::Contains("op 0 ran on device " + std::to_string(1 - p.device[0])));
  ExecOptions five = quick();
  five.repeats = 5;
  std::ofstream(dir.file("moved.json")) << measurement_to_json(g, 2, real.value());
  auto fewer = execute_through(answer, "cpu", g, p, cpu_cluster(2), five);
  REQUIRE_FALSE(fewer.ok());
  CHECK_THAT(fewer.error().message, Catch::Contains("3 timed runs, not 5"));
}

TEST_CASE("gantry-exec's device count is read from it", "[executor]") {
  auto seen = cuda_devices_seen_by(GANTRY_EXEC_BINARY);
  REQUIRE(seen.ok());
  CHECK(seen.value() == cuda_device_count());  // the same LibTorch as this process
  const testing::TempDir dir;
  auto not_exec = cuda_devices_seen_by(recording_program(dir, "chatty.sh", "(echo hello; cat > /dev/null)"));
  REQUIRE_FALSE(not_exec.ok());
  CHECK_THAT(not_exec.error().message, Catch::Contains("answered hello, not a status"));
}

namespace {

int servers_started(const testing::TempDir& dir) {
  const std::string calls = read_text_file(dir.file("calls")).value();
  int starts = 0;
  for (std::size_t at = calls.find("--serve"); at != std::string::npos; at = calls.find("--serve", at + 1)) ++starts;
  return starts;
}

}  // namespace

TEST_CASE("a server that failed a request or ended is replaced by the next request", "[executor]") {
  const testing::TempDir dir;
  const Graph g = small_ffnn();
  const Placement p = spread(g, 2);
  const std::string program = testing::recorded_gantry_exec(dir, GANTRY_EXEC_BINARY);
  ExecOptions partitioned = quick();
  partitioned.sm_partitions = true;  // gantry-exec refuses it on the CPU backend
  auto refused = execute_through(program, "cpu", g, p, cpu_cluster(2), partitioned);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("--partition sms needs --backend cuda"));
  CHECK(execute_through(program, "cpu", g, p, cpu_cluster(2), quick()).ok());
  CHECK(servers_started(dir) == 2);  // a fresh one after the failure
  CHECK(execute_through(program, "cpu", g, p, cpu_cluster(2), quick()).ok());
  CHECK(servers_started(dir) == 2);  // kept while it answers
  // Killed between requests (its whole process group: the wrapper, tee and gantry-exec).
  const int pid = std::stoi(read_text_file(dir.file("pid")).value());
  REQUIRE(kill(-pid, SIGKILL) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto again = execute_through(program, "cpu", g, p, cpu_cluster(2), quick());
  INFO((again.ok() ? std::string() : again.error().message));
  CHECK(again.ok());
  CHECK(servers_started(dir) == 3);
}

TEST_CASE("a measurement's JSON reads back for its graph and refuses what does not fit it", "[executor]") {
  const Graph g = small_ffnn();
  auto measured = execute_on_cpu(g, spread(g, 2), cpu_cluster(2), quick());
  REQUIRE(measured.ok());
  const Measurement& m = measured.value();
  const std::string text = measurement_to_json(g, 2, m);
  auto back = measurement_from_json(text, g, "m.json");
  REQUIRE(back.ok());
  CHECK(back.value().makespans == m.makespans);
  CHECK(back.value().median == m.median);
  CHECK(back.value().median_run.makespan == m.median_run.makespan);
  REQUIRE(back.value().median_run.ops.size() == m.median_run.ops.size());
  for (std::size_t i = 0; i < m.median_run.ops.size(); ++i) {
    CHECK(back.value().median_run.ops[i].device == m.median_run.ops[i].device);
    CHECK(back.value().median_run.ops[i].start == m.median_run.ops[i].start);
    CHECK(back.value().median_run.ops[i].end == m.median_run.ops[i].end);
  }
  REQUIRE(back.value().median_run.transfers.size() == m.median_run.transfers.size());
  for (std::size_t i = 0; i < m.median_run.transfers.size(); ++i) {
    const TransferRecord &a = back.value().median_run.transfers[i], &b = m.median_run.transfers[i];
    CHECK(a.op == b.op);
    CHECK(a.from == b.from);
    CHECK(a.to == b.to);
    CHECK(a.bytes == b.bytes);
    CHECK(a.start == b.start);
    CHECK(a.end == b.end);
  }

  // A file of gantry-exec before op ids: each op found by its name.
  auto old_file = nlohmann::json::parse(text);
  old_file.erase("median_run_makespan");
  for (auto& r : old_file["ops"]) r.erase("op_id");
  for (auto& t : old_file["transfers"]) t.erase("op_id");
  std::reverse(old_file["ops"].begin(), old_file["ops"].end());
  auto by_name = measurement_from_json(old_file.dump(), g, "old.json");
  REQUIRE(by_name.ok());
  for (std::size_t i = 0; i < m.median_run.ops.size(); ++i) {
    CHECK(by_name.value().median_run.ops[i].op == static_cast<OpId>(i));
    CHECK(by_name.value().median_run.ops[i].start == m.median_run.ops[i].start);
  }
  for (std::size_t i = 0; i < m.median_run.transfers.size(); ++i)
    CHECK(by_name.value().median_run.transfers[i].op == m.median_run.transfers[i].op);
  CHECK(by_name.value().median_run.makespan == m.median);
  old_file["ops"][0]["op"] = "no-such-op";
  auto unknown = measurement_from_json(old_file.dump(), g, "old.json");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error().message, Catch::Contains("old.json: ops[0]: the graph has no op no-such-op"));

  auto other = make_workload("ffnn:layers=2,blocks=2,batch=64,hidden=48");
  REQUIRE(other.ok());
  auto wrong_graph = measurement_from_json(text, other.value(), "m.json");
  REQUIRE_FALSE(wrong_graph.ok());
  CHECK_THAT(wrong_graph.error().message, Catch::Contains("m.json") && Catch::Contains("the graph has"));

  auto one_device = measurement_from_json(measurement_to_json(g, 1, m), g, "m.json");
  REQUIRE_FALSE(one_device.ok());
  CHECK_THAT(one_device.error().message, Catch::Contains("\"device\" is not a whole number from 0 to 0"));

  auto not_json = measurement_from_json("{", g, "m.json");
  REQUIRE_FALSE(not_json.ok());
  CHECK_THAT(not_json.error().message, Catch::Contains("m.json"));
}
