// gantry-exec, the standalone executor, as a user runs it: a graph and a placement in, the
// measurement out. And the CUDA backend: on a GPU its values equal the CPU backend's; without one
// it says it cannot run (tests tagged [gpu] skip there).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "core/graph_io.hpp"
#include "core/placement.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/cuda/cuda_executor.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/executor_cases.hpp"
#include "tests/support/temp_dir.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

namespace {

using testing::small_ffnn;
using testing::spread;

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("gantry-exec runs a graph file's placement and writes its measurement", "[executor]") {
  const testing::TempDir dir;
  const Graph g = small_ffnn();
  const Placement p = spread(g, 3);
  write(dir.file("g.json"), graph_to_json(g));
  write(dir.file("p.json"), placement_to_json(p, "", "cpu-3"));
  const std::string command = std::string(GANTRY_EXEC_BINARY) + " --graph " + dir.file("g.json") + " --placement " +
                              dir.file("p.json") + " --repeats 3 --no-pin --check --out " + dir.file("m.json") + " 2>" + dir.file("err");
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(dir.file("m.json"));
  const auto m = nlohmann::json::parse(in);
  CHECK(m["backend"] == "cpu");
  CHECK(m["devices"] == 3);
  CHECK(m["makespans"].size() == 3);
  CHECK(m["median"].get<double>() > 0);
  REQUIRE(m["ops"].size() == static_cast<std::size_t>(g.size()));
  for (const auto& op : m["ops"]) CHECK(op["end"].get<double>() >= op["start"].get<double>());
  // One transfer per (producer, other device that consumes it), counted from the graph here.
  std::set<std::pair<OpId, int>> needed;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const int from = p.device[static_cast<std::size_t>(g.edge_src(e))], to = p.device[static_cast<std::size_t>(g.edge_dst(e))];
    if (from != to) needed.insert({g.edge_src(e), to});
  }
  CHECK(m["transfers"].size() == needed.size());
  // --check compared every value of every output (the ops without successors) with a run of every
  // op on one CPU device: the three devices' transfers delivered what one device computes alone.
  std::size_t sinks = 0, values = 0;
  for (OpId op = 0; op < g.size(); ++op)
    if (g.succs(op).size() == 0) {
      ++sinks;
      values += static_cast<std::size_t>(g.output_bytes(op) / 4);  // float32
    }
  CHECK(m["check"]["outputs"] == sinks);
  CHECK(m["check"]["values"] == values);
  CHECK(m["check"]["match"] == true);

  // What a refused run says: it fails, and its error names the flag.
  const auto refusal = [&](const std::string& flags) {
    const std::string command = std::string(GANTRY_EXEC_BINARY) + " --graph " + dir.file("g.json") + " --placement " +
                                dir.file("p.json") + " " + flags + " 2>" + dir.file("err");
    CHECK(std::system(command.c_str()) != 0);
    return testing::read_text(dir.file("err"));
  };
  CHECK_THAT(refusal("--repeats zero"), Catch::Contains("--repeats zero"));
  // A per-device list must have one value per device (the placement uses 3).
  CHECK_THAT(refusal("--streams 1,2"), Catch::Contains("--streams lists 2 values; the run has 3 devices"));
  // SM partitions are a GPU's: asked of the CPU backend, or misspelt, the flag is named.
  for (const std::string& partition : {std::string("sms"), std::string("cores")})
    CHECK_THAT(refusal("--partition " + partition), Catch::Contains("--partition " + partition));
}

TEST_CASE("gantry-exec --serve answers every request piped in, in order", "[executor]") {
  // Requests from a pipe whose writer has closed before the first run ends: all are answered.
  const testing::TempDir dir;
  const Graph g = small_ffnn();
  write(dir.file("g.json"), graph_to_json(g));
  write(dir.file("p.json"), placement_to_json(spread(g, 2), "", "cpu-2"));
  const std::string run = R"(["--graph",")" + dir.file("g.json") + R"(","--placement",")" + dir.file("p.json") +
                          R"(","--repeats","1","--no-pin","--out",")";
  write(dir.file("requests"), run + dir.file("m1.json") + "\"]\n[\"--devices-visible\"]\n[\"--help\"]\n" + run +
                                 dir.file("m2.json") + "\"]\n");
  const std::string command = "cat " + dir.file("requests") + " | " + GANTRY_EXEC_BINARY + " --serve > " + dir.file("answers") +
                              " 2> " + dir.file("log");
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(dir.file("answers"));
  std::vector<nlohmann::json> answers;
  for (std::string line; std::getline(in, line);) answers.push_back(nlohmann::json::parse(line));
  REQUIRE(answers.size() == 4);
  CHECK(answers[0]["status"] == 0);
  CHECK(answers[1]["status"] == 0);
  CHECK(answers[1]["devices"] == cuda_device_count());
  CHECK(answers[2]["status"] == 1);  // --help is the command line's, not a request
  CHECK(answers[3]["status"] == 0);
  CHECK(std::ifstream(dir.file("m1.json")).good());
  CHECK(std::ifstream(dir.file("m2.json")).good());
}

TEST_CASE("gantry-exec writes its one-device run's op times as profile samples of the kind it is told", "[executor]") {
  const testing::TempDir dir;
  const Graph g = small_ffnn();
  write(dir.file("g.json"), graph_to_json(g));
  write(dir.file("one.json"), placement_to_json(spread(g, 1), "", "cpu-1"));
  write(dir.file("three.json"), placement_to_json(spread(g, 3), "", "cpu-3"));
  const auto run = [&](const std::string& placement, const std::string& flags, const std::string& err) {
    const std::string command = std::string(GANTRY_EXEC_BINARY) + " --graph " + dir.file("g.json") + " --placement " +
                                dir.file(placement) + " --repeats 1 --no-pin " + flags + " 2>" + dir.file(err);
    return std::system(command.c_str());
  };
  const auto said = [&](const std::string& err) { return testing::read_text(dir.file(err)); };
  REQUIRE(run("one.json", "--device-kind H200 --profile-out " + dir.file("profiles.json") + " --out " + dir.file("m.json"), "err") == 0);
  std::ifstream written(dir.file("profiles.json"));
  const auto profiles = nlohmann::json::parse(written);
  CHECK(profiles["format"] == "gantry-profiles");
  // Every op of the run once, under the kind given; no transfers on one device.
  double op_samples = 0;
  for (const auto& e : profiles["entries"]) {
    CHECK(e["kind"] == "H200");
    op_samples += e["count"].get<double>();
  }
  CHECK(op_samples == g.size());
  // Ops timed beside other devices are not solo times: refused, and so is a kind without the file.
  CHECK(run("three.json", "--profile-out " + dir.file("three-profiles.json"), "three") != 0);
  CHECK_THAT(said("three"), Catch::Contains("--profile-out needs a placement on one device (this one uses 3)"));
  CHECK(run("one.json", "--device-kind H200", "alone") != 0);
  CHECK_THAT(said("alone"), Catch::Contains("--device-kind H200 needs --profile-out"));
}

TEST_CASE("the CUDA backend computes what the CPU backend computes, on D devices sharing the GPUs", "[executor][gpu]") {
  const Graph g = small_ffnn();
  auto cluster = Cluster::identical(3);
  REQUIRE(cluster.ok());
  ExecOptions options;
  options.repeats = 2;
  options.keep_outputs = true;
  options.pin_threads = false;
  if (cuda_device_count() == 0) {
    auto refused = execute_on_cuda(g, spread(g, 3), cluster.value(), options);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("CUDA"));
    WARN("no CUDA device: the CUDA backend's run was skipped");
    return;
  }
  auto gpu = execute_on_cuda(g, spread(g, 3), cluster.value(), options);
  REQUIRE(gpu.ok());
  auto cpu = execute_on_cpu(g, spread(g, 3), cluster.value(), options);
  REQUIRE(cpu.ok());
  CHECK(gpu.value().backend == "cuda");
  REQUIRE(gpu.value().outputs.size() == cpu.value().outputs.size());
  for (std::size_t i = 0; i < cpu.value().outputs.size(); ++i) {
    const OutputTensor &a = gpu.value().outputs[i], &b = cpu.value().outputs[i];
    REQUIRE(a.values.size() == b.values.size());
    for (std::size_t k = 0; k < a.values.size(); ++k) CHECK(a.values[k] == Approx(b.values[k]).margin(1e-4).epsilon(1e-3));
  }
  const RunRecord& run = gpu.value().median_run;
  for (const OpRecord& r : run.ops) CHECK(r.end >= r.start);
  CHECK(run.makespan > 0);

  // The same devices on disjoint SM partitions (green contexts) where they share a GPU.
  options.sm_partitions = true;
  auto parted = execute_on_cuda(g, spread(g, 3), cluster.value(), options);
  REQUIRE(parted.ok());
  if (cuda_device_count() < 3) CHECK_THAT(parted.value().layout, Catch::Contains("SM partitions"));
  for (std::size_t i = 0; i < cpu.value().outputs.size(); ++i) {
    const OutputTensor &a = parted.value().outputs[i], &b = cpu.value().outputs[i];
    REQUIRE(a.values.size() == b.values.size());
    for (std::size_t k = 0; k < a.values.size(); ++k) CHECK(a.values[k] == Approx(b.values[k]).margin(1e-4).epsilon(1e-3));
  }
}
