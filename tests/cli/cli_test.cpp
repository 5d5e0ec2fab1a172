#include <catch2/catch.hpp>
#include "tests/support/temp_dir.hpp"
#include <nlohmann/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/duration.hpp"
#include "storage/store.hpp"
#include "core/profile_table.hpp"
#include "executor/cuda/cuda_executor.hpp"
#include "tests/cli/cli_runner.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/recording_program.hpp"
#include "tests/support/temp_dir.hpp"

using namespace gantry::cli;

namespace {

std::string run_gantry(const std::vector<std::string>& args) { return gantry::testing::run_verbs(args); }


const std::string kData = GANTRY_TEST_DATA;

}  // namespace

TEST_CASE("durations", "[cli]") {
  CHECK(parse_duration("30s").value() == 30);
  CHECK(parse_duration("500ms").value() == Approx(0.5));
  CHECK(parse_duration("2m").value() == 120);
  CHECK(parse_duration("1.5").value() == 1.5);
  CHECK_FALSE(parse_duration("soon").ok());
  CHECK_FALSE(parse_duration("-3s").ok());
}

TEST_CASE("tables print huge values in scientific notation, not hundreds of cut-off digits", "[cli]") {
  CHECK(format_time(1.5, "s") == "1.500 s");
  CHECK(format_time(2e299, "s") == "2e+299 s");
  CHECK(format_fixed(12.5, 2) == "12.50");
  CHECK(format_fixed(2e20, 3) == "2e+20");
  CHECK(format_fixed(-3e300, 1) == "-3e+300");
}

TEST_CASE("place prints JSON with method, makespan, lower bound and placement", "[cli]") {
  auto out = nlohmann::json::parse(run_gantry({"place", "--graph", kData + "/stg/50/rand0001.stg", "--cluster",
                                               "identical:4", "--method", "heft", "-f", "json"}));
  CHECK(out["method"] == "heft");
  CHECK(out["makespan"].get<double>() >= out["lower_bound"].get<double>());
  CHECK(out["placement"].size() == 50);
  auto all = nlohmann::json::parse(run_gantry({"place", "--graph", kData + "/stg/50/rand0001.stg", "--cluster",
                                               "identical:4", "--method", "single,round-robin,cp", "-f", "json"}));
  REQUIRE(all.is_array());
  CHECK(all.size() == 3);
}

TEST_CASE("simulate replays a placement written by place", "[cli]") {
  const gantry::testing::TempDir dir;  // never the current directory
  const std::string file = dir.file("placement.json");
  {
    std::ofstream out(file);
    out << run_gantry({"place", "--graph", kData + "/doppler/ffnn_192nodes.txt", "--cluster", "identical:4",
                       "--sim", "doppler", "--method", "cp", "-f", "json"});
  }
  auto placed = nlohmann::json::parse(std::ifstream(file));
  auto replay = nlohmann::json::parse(run_gantry({"simulate", "--graph", kData + "/doppler/ffnn_192nodes.txt",
                                                  "--cluster", "identical:4", "--sim", "doppler", "--placement", file,
                                                  "-f", "json"}));
  CHECK(replay["makespan"] == placed["makespan"]);
}

TEST_CASE("bad input is a clear error", "[cli]") {
  const std::string stg = kData + "/stg/50/rand0001.stg";
  CHECK_THROWS_WITH(run_gantry({"place", "--graph", stg, "--cluster", "identical:0"}), Catch::Contains("device count"));
  CHECK_THROWS_WITH(run_gantry({"place", "--graph", stg, "--cluster", "9xA1"}), Catch::Contains("unknown cluster '9xA1'"));
  CHECK_THROWS_WITH(run_gantry({"place", "--graph", "missing.json"}), Catch::Contains("missing.json: cannot read: No such file or directory"));
  CHECK_THROWS_WITH(run_gantry({"place", "--cluster", "identical:2"}), Catch::Contains("--graph FILE or --workload"));
  CHECK_THROWS_WITH(run_gantry({"place", "--graph", stg, "--cluster", "identical:2", "--method", "magic"}),
                    Catch::Contains("unknown placement method 'magic'"));
  CHECK_THROWS_WITH(run_gantry({"place", "--workload", "nosuch", "--cluster", "identical:2"}), Catch::Contains("nosuch"));
  // Output files whose folder is missing are refused before minutes of training or tuning, not after.
  const gantry::testing::TempDir dir;
  CHECK_THROWS_WITH(run_gantry({"train", "--graph", stg, "--cluster", "identical:2", "--episodes", "8", "--data",
                                dir.file("data"), "--save", dir.file("missing/x.policy")}),
                    Catch::Contains("--save " + dir.file("missing/x.policy") + ": the folder " + dir.file("missing") + " does not exist"));
  CHECK_FALSE(std::filesystem::exists(dir.file("data")));  // refused before the store was opened
  CHECK_THROWS_WITH(run_gantry({"train", "--graph", stg, "--cluster", "identical:2", "--episodes", "8", "--no-store",
                                "--curve", dir.file("missing/c.svg")}),
                    Catch::Contains("--curve") && Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(run_gantry({"pipeline", "tune", "--model", "llama-3-8b", "--pp", "2", "--no-store", "--save-scheme",
                                dir.file("missing/s.json")}),
                    Catch::Contains("--save-scheme") && Catch::Contains("does not exist"));
}

TEST_CASE("pipeline compare runs every baseline on a model and on stage costs", "[cli]") {
  auto model = nlohmann::json::parse(run_gantry({"pipeline", "compare", "--model", "nemotron-h-8b", "--cluster",
                                                 "8xH100-nvswitch", "--pp", "4", "--microbatches", "8", "-f", "json"}));
  REQUIRE(model.size() == 5);  // gpipe, 1f1b, interleaved:2, zb, zbv
  for (const auto& r : model) {
    CHECK(r["completed"] == true);
    if (r["out_of_memory"] == false) CHECK(r["iteration_time"].get<double>() > 0);
  }
  auto file = nlohmann::json::parse(run_gantry({"pipeline", "simulate", "--stages",
                                                std::string(GANTRY_SOURCE_DIR) + "/configs/pipelines/zb-example.json",
                                                "--schedule", "zb", "-f", "json"}));
  CHECK(file["schedule"] == "zb");
  // Bubbles are the idle share of 4 devices over the iteration: busy time is 12 microbatches of
  // f + b + w per stage, 12 x (0.032 + 0.029 + 0.029 + 0.0385) = 1.542 s (zb-example.json).
  const double iteration = file["iteration_time"].get<double>();
  CHECK(iteration >= 12 * 0.0385);  // no stage finishes before its own work
  CHECK(file["bubble_ratio"].get<double>() == Approx(1 - 1.542 / (4 * iteration)));
  CHECK(file["bubble_ratio"].get<double>() < 0.3);
  CHECK_THROWS_WITH(run_gantry({"pipeline", "simulate", "--model", "gpt-9", "--schedule", "1f1b"}), Catch::Contains("gpt-9"));
  CHECK_THROWS_WITH(run_gantry({"pipeline", "simulate", "--model", "llama-3-8b", "--pp", "64", "--schedule", "1f1b"}),
                    Catch::Contains("has only 8 devices"));
}

TEST_CASE("execute and profile refuse a cluster of GPUs: this machine's cores would be recorded as their profiles",
          "[cli]") {
  CHECK_THROWS_WITH(run_gantry({"execute", "--workload", "ffnn:layers=2,blocks=2,batch=64,hidden=64", "--cluster",
                                "4xP100-pcie", "--method", "round-robin", "--repeats", "1", "--no-record"}),
                    Catch::Contains("device 0 (kind P100) is not a CPU core"));
  CHECK_THROWS_WITH(run_gantry({"profile", "--cluster", "8xH100-nvswitch", "--repeats", "1"}),
                    Catch::Contains("device 0 (kind H100) is not a CPU core"));
}

TEST_CASE("execute measures a placement for real and sets the simulator's prediction beside it", "[cli]") {
  auto out = nlohmann::json::parse(run_gantry({"execute", "--workload", "ffnn:layers=2,blocks=2,batch=64,hidden=64",
                                               "--cluster", "cpu-2", "--method", "round-robin", "--repeats", "3",
                                               "--no-pin", "--no-record", "-f", "json"}));
  CHECK(out["placement"] == "round-robin");
  CHECK(out["measured"]["makespans"].size() == 3);
  const double median = out["measured"]["median"].get<double>();
  CHECK(median > 0);
  CHECK(out["measured"]["min"].get<double>() <= median);
  // Round-robin over 2 devices ships tiles both ways, as the simulator counts them.
  CHECK(out["measured"]["transfers"].get<int>() == out["simulated"]["transfers"].get<int>());
  CHECK(out["measured"]["transfers"].get<int>() > 0);
  CHECK(out["error"].get<double>() == Approx(out["simulated"]["makespan"].get<double>() / median - 1));
}

TEST_CASE("execute --gantry-exec measures through that program; the flag is refused where it cannot serve", "[cli]") {
  const gantry::testing::TempDir dir;
  const std::string script = gantry::testing::recorded_gantry_exec(dir, GANTRY_EXEC_BINARY), calls = dir.file("calls");
  const std::vector<std::string> problem{"--workload", "ffnn:layers=2,blocks=2,batch=64,hidden=64", "--cluster", "cpu-2"};
  const auto with_problem = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, problem.begin(), problem.end());
    return args;
  };
  auto out = nlohmann::json::parse(run_gantry(with_problem({"execute", "--method", "round-robin", "--repeats", "3",
                                                            "--no-pin", "--no-record", "--gantry-exec", script, "-f", "json"})));
  CHECK(out["measured"]["makespans"].size() == 3);
  CHECK(out["measured"]["transfers"].get<int>() == out["simulated"]["transfers"].get<int>());
  // The server starts before a placement is chosen (asked for the device count), then measures.
  std::ifstream called(calls);
  std::string line;
  REQUIRE(std::getline(called, line));
  CHECK(line == "--serve --end-with-stdin");
  REQUIRE(std::getline(called, line));
  CHECK(line == R"(["--devices-visible"])");
  REQUIRE(std::getline(called, line));
  CHECK_THAT(line, Catch::Contains(R"("--backend","cpu","--devices","2")"));

  CHECK_THROWS_WITH(run_gantry(with_problem({"execute", "--method", "single", "--gantry-exec", script, "--coordinator",
                                             "tcp://127.0.0.1:1"})),
                    Catch::Contains("--gantry-exec is for a run in this process"));
  CHECK_THROWS_WITH(run_gantry({"worker", "--gantry-exec", script}), Catch::Contains("needs --devices"));
  CHECK_THROWS_WITH(run_gantry({"worker", "--devices", "cuda:1", "--gantry-exec", dir.file("none")}),
                    Catch::Contains("cannot start " + dir.file("none")));
  CHECK_THROWS_WITH(run_gantry(with_problem({"tune", "--method", "search", "--gantry-exec", script})),
                    Catch::Contains("--gantry-exec " + script + " needs --devices"));
  CHECK_THROWS_WITH(run_gantry(with_problem({"train", "--stage", "sim", "--gantry-exec", script})),
                    Catch::Contains("measures stage III's episodes"));

  // Stage III measures its episodes through the program: the teacher's, each episode's and the
  // final greedy and best placements (at least 8 + 1 requests beside the device count).
  const std::size_t before_training = gantry::testing::read_text(calls).size();
  auto trained = nlohmann::json::parse(run_gantry(with_problem({"train", "--stage", "real", "--episodes", "8", "--batch", "4",
                                                                "--no-store", "--gantry-exec", script, "-f", "json"})));
  CHECK(trained["state"] == "COMPLETE");
  CHECK(trained["episodes"].get<int>() >= 8);
  CHECK(trained["graphs"][0]["teacher_makespan"].get<double>() > 0);
  std::istringstream training_calls(gantry::testing::read_text(calls).substr(before_training));
  int measured = 0;
  while (std::getline(training_calls, line)) measured += line.find(R"("--backend","cpu","--devices","2")") != std::string::npos;
  CHECK(measured >= 9);

  // profile runs the profiler's placements through the program; a GPU cluster needs a GPU per device.
  // (The same server: this process started it for execute above.)
  const std::size_t before = gantry::testing::read_text(calls).size();
  auto profiled = nlohmann::json::parse(run_gantry({"profile", "--cluster", "cpu-2", "--workload", "chainmm:blocks=2,size=64",
                                                    "--random-placements", "0", "--repeats", "1", "--link-ladder", "none",
                                                    "--no-store", "--no-pin", "--gantry-exec", script, "-f", "json"}));
  CHECK_FALSE(profiled["entries"].empty());
  std::istringstream profile_calls(gantry::testing::read_text(calls).substr(before));
  int runs = 0;
  while (std::getline(profile_calls, line)) runs += line.find(R"("--backend","cpu","--devices","2")") != std::string::npos;
  CHECK(runs == 2);  // all on one device, and round-robin
  if (gantry::cuda_device_count() == 0)  // gantry-exec is built against this process's LibTorch
    CHECK_THROWS_WITH(run_gantry({"profile", "--cluster", "4xP100-pcie", "--gantry-exec", GANTRY_EXEC_BINARY, "--no-store"}),
                      Catch::Contains("sees 0 GPU(s) and --cluster 4xP100-pcie has 4 devices"));
}

TEST_CASE("tune --method doppler with executor devices follows stages I and II with stage III; without, it does not", "[cli]") {
  const gantry::testing::TempDir dir;
  const std::string graph = "ffnn:layers=1,blocks=2,batch=64,hidden=64";
  auto tune = [&](const std::string& data, std::vector<std::string> extra) {
    std::vector<std::string> args{"tune", "--method", "doppler", "--workload", graph, "--cluster", "cpu-2", "--budget", "2s",
                                  "--data", data};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string out = run_gantry(args);
    return nlohmann::json::parse(
        run_gantry({"query", "best", "--workload", graph, "--cluster", "cpu-2", "--data", data, "-f", "json"}));
  };
  const auto with = tune(dir.file("with"), {"--devices", "cpu:2"});
  REQUIRE(with["measured"].is_object());
  CHECK(with["measured"]["median"].get<double>() > 0);
  const auto without = tune(dir.file("without"), {});
  CHECK(without["measured"].is_null());
  CHECK(without["method"] == "doppler");
}

TEST_CASE("profile --import adds samples measured elsewhere to the store's profiles", "[cli]") {
  const gantry::testing::TempDir dir;
  const std::string data = dir.file("data");
  // A GEMM measured at 1 and 3 ms on an H200 (as gantry-exec --profile-out writes them): mean 2 ms.
  gantry::ProfileTable measured;
  const gantry::OpSignature gemm{"matmul/f32", "matmul/f32 [64x64] [64x64]", 2.0 * 64 * 64 * 64, {6, 6, 6}};
  measured.add("H200", gemm, 1e-3);
  measured.add("H200", gemm, 3e-3);
  const std::string file = dir.file("h200.json");
  {
    std::ofstream out(file);
    out << gantry::profiles_to_json(measured);
  }
  run_gantry({"profile", "--import", file, "--data", data});
  run_gantry({"profile", "--import", file, "--data", data});  // twice: the samples add up
  auto store = gantry::Store::open_read_only(data);
  REQUIRE(store.ok());
  auto profiles = store.value()->profiles();
  REQUIRE(profiles.ok());
  const auto entries = profiles.value().entries();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].device_kind == "H200");
  CHECK(entries[0].seconds.count == 4);
  CHECK(entries[0].seconds.mean == Approx(2e-3));
  CHECK(profiles.value().op_time("H200", gemm).value() == Approx(2e-3));
  // Files that are not profiles are named; importing measures nothing, so --workload is refused.
  const std::string bad = dir.file("bad.json");
  {
    std::ofstream out(bad);
    out << "{\"format\": \"gantry-graph\"}";
  }
  CHECK_THROWS_WITH(run_gantry({"profile", "--import", bad, "--data", data}), Catch::Contains(bad));
  CHECK_THROWS_WITH(run_gantry({"profile", "--import", dir.file("none.json"), "--data", data}), Catch::Contains("none.json"));
  CHECK_THROWS_WITH(run_gantry({"profile", "--import", file, "--workload", "chainmm", "--data", data}),
                    Catch::Contains("--workload does not apply"));
  CHECK_THROWS_WITH(run_gantry({"profile", "--import", file, "--cluster", "cpu-2", "--data", data}),
                    Catch::Contains("--cluster does not apply"));
  CHECK_THROWS_WITH(run_gantry({"profile", "--import", file, "--repeats", "5", "--data", data}),
                    Catch::Contains("--repeats does not apply"));
}

TEST_CASE("train --profiled learns on the calibrated simulator and stores its best under the profiles' key", "[cli]") {
  const gantry::testing::TempDir dir;
  const std::string data = dir.file("data");
  const std::string graph = "ffnn:layers=1,blocks=2,batch=64,hidden=64";
  const std::vector<std::string> problem{"--workload", graph, "--cluster", "cpu-2", "--data", data};
  auto with = [&](std::vector<std::string> verb, const std::vector<std::string>& extra = {}) {
    verb.insert(verb.end(), problem.begin(), problem.end());
    verb.insert(verb.end(), extra.begin(), extra.end());
    return verb;
  };
  // Without profiles in the store the flag is refused, naming what to run.
  CHECK_THROWS_WITH(run_gantry(with({"train", "--stage", "il", "--episodes", "4", "--profiled"})),
                    Catch::Contains("gantry profile"));
  run_gantry({"profile", "--workload", graph, "--random-placements", "0", "--repeats", "1", "--link-ladder", "none",
              "--data", data});
  run_gantry(with({"train", "--stage", "il", "--episodes", "8", "--batch", "4", "--profiled"}));
  // The best is found under the profiled key only, and its makespan is what the profiled simulator
  // gives its placement (the roofline's differs).
  auto best = nlohmann::json::parse(run_gantry(with({"query", "best", "--profiled", "-f", "json"})));
  CHECK(best["method"] == "doppler");
  CHECK_THROWS_WITH(run_gantry(with({"query", "best", "-f", "json"})), Catch::Contains("no stored placement"));
  const std::string placement = dir.file("p.json");
  {
    std::ofstream out(placement);
    out << run_gantry(with({"query", "export", "--profiled"}));
  }
  auto profiled = nlohmann::json::parse(run_gantry(with({"simulate", "--placement", placement, "--profiled", "-f", "json"})));
  auto roofline = nlohmann::json::parse(run_gantry(with({"simulate", "--placement", placement, "-f", "json"})));
  CHECK(profiled["makespan"].get<double>() == Approx(best["makespan"].get<double>()));
  CHECK(roofline["makespan"].get<double>() != Approx(best["makespan"].get<double>()));
}

TEST_CASE("train --stage real learns on measured makespans and stores the best with its measurement", "[cli]") {
  const gantry::testing::TempDir dir;
  const std::string data = dir.file("data");
  const std::string graph = "ffnn:layers=1,blocks=2,batch=64,hidden=64";
  run_gantry({"train", "--workload", graph, "--cluster", "cpu-2", "--stage", "real", "--episodes", "8", "--batch", "4",
              "--data", data});
  auto best = nlohmann::json::parse(
      run_gantry({"query", "best", "--workload", graph, "--cluster", "cpu-2", "--data", data, "-f", "json"}));
  CHECK(best["method"] == "doppler");
  REQUIRE(best["measured"].is_object());
  CHECK(best["measured"]["runs"] == 3);
  CHECK(best["measured"]["backend"] == "cpu");
  CHECK(best["measured"]["median"].get<double>() > 0);
  // The stored makespan is the simulated one of the same placement, what every other record holds.
  const std::string placement = dir.file("p.json");
  {
    std::ofstream out(placement);
    out << run_gantry({"query", "export", "--workload", graph, "--cluster", "cpu-2", "--data", data});
  }
  auto replay = nlohmann::json::parse(run_gantry({"simulate", "--workload", graph, "--cluster", "cpu-2", "--placement",
                                                  placement, "-f", "json"}));
  CHECK(replay["makespan"].get<double>() == Approx(best["makespan"].get<double>()));
  auto policies = nlohmann::json::parse(run_gantry({"query", "policies", "--data", data, "-f", "json"}));
  REQUIRE(policies.size() == 1);
  CHECK(policies[0]["stage"] == "real");

  // With simulated exploration beside it (a quarter of the requests measured), the final best is
  // still measured and stored with its measurement.
  const std::string mixed = dir.file("mixed");
  run_gantry({"train", "--workload", graph, "--cluster", "cpu-2", "--stage", "real", "--measured-share", "0.25",
              "--episodes", "16", "--batch", "2", "--threads", "2", "--data", mixed});
  auto mixed_best = nlohmann::json::parse(
      run_gantry({"query", "best", "--workload", graph, "--cluster", "cpu-2", "--data", mixed, "-f", "json"}));
  REQUIRE(mixed_best["measured"].is_object());
  CHECK(mixed_best["measured"]["median"].get<double>() > 0);
}

TEST_CASE("train -f json reports each graph's teacher and best as the other verbs compute them", "[cli]") {
  const gantry::testing::TempDir dir;
  const std::vector<std::string> problem{"--workload", "chainmm:blocks=2,kblocks=2,size=64", "--cluster", "4xP100-pcie"};
  auto with = [&](std::vector<std::string> verb) {
    verb.insert(verb.end(), problem.begin(), problem.end());
    return verb;
  };
  const auto report = nlohmann::json::parse(
      run_gantry(with({"train", "--stage", "il+sim", "--episodes", "16", "--batch", "4", "--no-store", "-f", "json"})));
  REQUIRE(report["graphs"].size() == 1);
  const auto& g = report["graphs"][0];
  CHECK(report["episodes"].get<long>() >= 16);
  CHECK(report["policy"] == "");  // --no-store
  // The teacher is the critical-path heuristic as `place` runs it.
  const auto cp = nlohmann::json::parse(run_gantry(with({"place", "--method", "cp", "-f", "json"})));
  CHECK(g["teacher_makespan"].get<double>() == Approx(cp["makespan"].get<double>()));
  CHECK(g["ops"].get<std::size_t>() == cp["placement"].size());
  // The best placement simulates to the best makespan.
  const std::string placement = dir.file("best.json");
  {
    std::ofstream out(placement);
    out << nlohmann::json{{"placement", g["best_placement"]}}.dump();
  }
  const auto simulated = nlohmann::json::parse(run_gantry(with({"simulate", "--placement", placement, "-f", "json"})));
  CHECK(g["best_makespan"].get<double>() == Approx(simulated["makespan"].get<double>()));
}
