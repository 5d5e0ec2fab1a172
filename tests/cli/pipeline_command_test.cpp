// gantry pipeline through the library entry point: scheme round trips and bad input.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "tests/cli/cli_runner.hpp"
#include "tests/support/temp_dir.hpp"

using namespace gantry::cli;
using gantry::testing::TempDir;
using nlohmann::json;

namespace {


// Runs `gantry pipeline ARGS...` in-process and returns what it printed on stdout.
std::string run_pipeline(std::vector<std::string> args) {
  args.insert(args.begin(), "pipeline");
  return gantry::testing::run_verbs(args);
}

json run_json(std::vector<std::string> args) {
  args.push_back("-f");
  args.push_back("json");
  return json::parse(run_pipeline(args));
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A 2-device 1F1B scheme over 2 microbatches with the given partition (JSON text).
std::string two_stage_scheme(const std::string& partition, const std::string& device0_first = "\"F 0 0\"") {
  return R"({"format": "gantry-pipeline-scheme", "version": 1, "microbatches": 2, "partition": )" + partition +
         R"(, "placement": [0, 1], "schedule": [[)" + device0_first +
         R"(, "F 1 0", "BW 0 0", "BW 1 0"], ["F 0 1", "BW 0 1", "F 1 1", "BW 1 1"]]})";
}

const std::string kStages = R"({"n_stages": 2, "n_micro": 2, "cost_f": 1, "cost_b": 1, "cost_w": 1, "cost_comm": 0.1})";

}  // namespace

TEST_CASE("a saved scheme reloads with its own partition and placement: same time, bubbles and memory",
          "[cli][pipeline]") {
  TempDir dir;
  const std::vector<std::string> partitions = {"uniform", "params", "compute"};
  for (const std::string schedule : {"gpipe", "1f1b", "interleaved", "zb", "zbv"})
    for (std::size_t i = 0; i < partitions.size(); ++i) {
      INFO(schedule << " x " << partitions[i]);
      const std::string file = dir.file(schedule + "-" + partitions[i] + ".json");
      const std::vector<std::string> model = {"simulate", "--model", "nemotron-h-8b", "--pp", "4"};
      auto args = model;
      for (const char* a : {"--microbatches", "8", "--partition", partitions[i].c_str(), "--schedule",
                                   schedule.c_str(), "--save-scheme", file.c_str()})
        args.push_back(a);
      json saved = run_json(args);
      // Reloaded under another --partition (the scheme's own wins) and without --microbatches.
      args = model;
      for (const char* a : {"--partition", partitions[(i + 1) % 3].c_str(), "--scheme", file.c_str()})
        args.push_back(a);
      json loaded = run_json(args);
      CHECK(loaded["schedule"] == file);
      saved.erase("schedule");
      loaded.erase("schedule");
      CHECK(loaded == saved);  // every number bit for bit: time, bubbles, memory, overlap, MFU
    }
  // Per-stage costs: interleaved and V schemes keep their chunk costs too.
  const std::string stages = std::string(GANTRY_SOURCE_DIR) + "/configs/pipelines/zb-example.json";
  for (const std::string schedule : {"interleaved:3", "zbv"}) {
    INFO(schedule);
    const std::string file = dir.file("file-" + schedule + ".json");
    json saved = run_json({"simulate", "--stages", stages, "--schedule", schedule, "--save-scheme", file});
    json loaded = run_json({"simulate", "--stages", stages, "--scheme", file});
    saved.erase("schedule");
    loaded.erase("schedule");
    CHECK(loaded == saved);
  }
}

TEST_CASE("a scheme whose partition does not fit the model is an error naming the file and field", "[cli][pipeline]") {
  TempDir dir;
  const std::string file = dir.file("scheme.json");
  auto load = [&](const std::string& partition) {
    write(file, two_stage_scheme(partition));
    return run_pipeline({"simulate", "--model", "nemotron-h-8b", "--scheme", file});
  };
  // nemotron-h-8b has 54 layers (52 and the embedding and logits pseudo-layers).
  CHECK_NOTHROW(load("[[0, 27], [27, 54]]"));
  CHECK_THROWS_WITH(load("[[0, 27], [27, 50]]"),
                    Catch::Contains(file + ": partition") && Catch::Contains("54 layers"));
  CHECK_THROWS_WITH(load("[[0, 27], [27, 60]]"), Catch::Contains(file + ": partition[1]") && Catch::Contains("54"));
  CHECK_THROWS_WITH(load("[[0, 26], [27, 54]]"),
                    Catch::Contains(file + ": partition[1]") && Catch::Contains("consecutive"));
  CHECK_THROWS_WITH(load("[[0, 0], [0, 54]]"), Catch::Contains(file + ": partition[0]") && Catch::Contains("empty"));
  CHECK_THROWS_WITH(load("[[1, 27], [27, 54]]"), Catch::Contains(file + ": partition[0]") && Catch::Contains("layer 0"));
  CHECK_THROWS_WITH(load("[[0, 54]]"), Catch::Contains(file + ": partition") && Catch::Contains("2 stages"));
  CHECK_THROWS_WITH(load("[]"), Catch::Contains(file + ": partition") && Catch::Contains("empty"));
  CHECK_THROWS_WITH(load("[[0, \"x\"], [27, 54]]"), Catch::Contains(file + ": partition[0]"));
  // A model's scheme with per-stage costs, and the pipeline degree or microbatches disagreeing.
  write(file, two_stage_scheme("[[0, 27], [27, 54]]"));
  const std::string stages = dir.file("stages.json");
  write(stages, kStages);
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--stages", stages, "--scheme", file}),
                    Catch::Contains(file + ": partition"));
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--model", "nemotron-h-8b", "--pp", "4", "--scheme", file}),
                    Catch::Contains(file + ": schedule") && Catch::Contains("2 devices"));
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--model", "nemotron-h-8b", "--microbatches", "4", "--scheme", file}),
                    Catch::Contains("--microbatches 4") && Catch::Contains("2 microbatches"));
}

TEST_CASE("bad pipeline input is an error naming the flag, file or field", "[cli][pipeline]") {
  TempDir dir;
  const std::string stages = dir.file("stages.json");
  write(stages, kStages);
  const std::vector<std::string> base = {"simulate", "--stages", stages};  // schedule 1f1b
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_pipeline(args);
  };
  CHECK_NOTHROW(with({}));
  CHECK_THROWS_WITH(with({"--microbatches", "0"}), Catch::Contains("--microbatches 0") && Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(with({"--microbatches", "-5"}), Catch::Contains("--microbatches -5"));
  CHECK_THROWS_WITH(with({"--mem-limit", "0"}), Catch::Contains("--mem-limit '0'") && Catch::Contains("> 0"));
  CHECK_THROWS_WITH(with({"--mem-limit", "-5GiB"}), Catch::Contains("--mem-limit '-5GiB'"));
  CHECK_THROWS_WITH(with({"--mem-limit", "nanGiB"}), Catch::Contains("--mem-limit 'nanGiB'"));
  CHECK_THROWS_WITH(with({"--pp", "2"}), Catch::Contains("--pp") && Catch::Contains("--stages"));
  // A misspelt key is an error, not a default (max_mems ran without a memory limit).
  const std::string typo = dir.file("typo.json");
  write(typo, R"({"n_stages": 2, "n_micro": 2, "cost_f": 1, "cost_b": 1, "cost_w": 1, "max_mems": 1})");
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--stages", typo}),
                    Catch::Contains(typo + ": unknown key \"max_mems\"") && Catch::Contains("max_mem"));
  const std::string odd = dir.file("odd-scheme.json");
  write(odd, R"({"format": "gantry-graph", "microbatches": 2, "placement": [0, 1],
                    "schedule": [["F 0 0", "F 1 0", "BW 0 0", "BW 1 0"], ["F 0 1", "BW 0 1", "F 1 1", "BW 1 1"]]})");
  CHECK_THROWS_WITH(with({"--scheme", odd}), Catch::Contains(odd + ": $.format: \"gantry-graph\" is not a gantry-pipeline-scheme file"));
  write(odd, R"({"version": 2, "microbatches": 2, "placement": [0, 1],
                    "schedule": [["F 0 0", "F 1 0", "BW 0 0", "BW 1 0"], ["F 0 1", "BW 0 1", "F 1 1", "BW 1 1"]]})");
  CHECK_THROWS_WITH(with({"--scheme", odd}), Catch::Contains(odd + ": $.version: 2 is not supported"));
  write(odd, R"({"microbatches": 2, "placement": [0, 1], "recomputed": [0],
                    "schedule": [["F 0 0", "F 1 0", "BW 0 0", "BW 1 0"], ["F 0 1", "BW 0 1", "F 1 1", "BW 1 1"]]})");
  CHECK_THROWS_WITH(with({"--scheme", odd}), Catch::Contains(odd + ": unknown key \"recomputed\""));
  const std::vector<std::string> model = {"simulate", "--model", "nemotron-h-8b", "--schedule", "1f1b"};
  for (const std::string pp : {"0", "-2"}) {
    auto args = model;
    args.insert(args.end(), {"--pp", pp});
    CHECK_THROWS_WITH(run_pipeline(args), Catch::Contains("--pp " + pp) && Catch::Contains("at least 1"));
  }
  // Sizes are checked before anything is built (this used to run out of memory after a long wait).
  CHECK_THROWS_WITH(with({"--microbatches", "100000000"}),
                    Catch::Contains("--microbatches") && Catch::Contains("exceeds the limit"));
  CHECK_THROWS_WITH(with({"--schedule", "interleaved:999999", "--microbatches", "2"}),
                    Catch::Contains("--microbatches") && Catch::Contains("exceeds the limit"));
  const std::string huge = dir.file("huge.json");
  for (const std::string n : {"1e8", "100000000"}) {
    write(huge, R"({"n_stages": 2, "n_micro": )" + n + R"(, "cost_f": 1, "cost_b": 1, "cost_w": 1})");
    CHECK_THROWS_WITH(run_pipeline({"simulate", "--stages", huge}),
                      Catch::Contains(huge + ": n_micro") && Catch::Contains("exceeds the limit"));
  }
  write(huge, R"({"n_stages": 2, "n_micro": 2.5, "cost_f": 1, "cost_b": 1, "cost_w": 1})");
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--stages", huge}), Catch::Contains(huge + ": 'n_micro'"));
  // max_mem: -1 is not "no limit".
  const std::string limit = dir.file("limit.json");
  write(limit, R"({"n_stages": 2, "n_micro": 2, "cost_f": 1, "cost_b": 1, "cost_w": 1, "max_mem": -1})");
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--stages", limit}), Catch::Contains(limit + ": max_mem[0]"));
  // Schemes: a task listed as both BW and B, an extra field, a huge microbatch count.
  const std::string scheme = dir.file("scheme.json");
  write(scheme, two_stage_scheme("[]", "\"F 0 0\", \"B 0 0\""));
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--stages", stages, "--scheme", scheme}),
                    Catch::Contains(scheme) && Catch::Contains("(0,0) needs either BW or both B and W"));
  write(scheme, two_stage_scheme("[]", "\"F 0 0 7\""));
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--stages", stages, "--scheme", scheme}),
                    Catch::Contains(scheme + ": schedule[0][0]") && Catch::Contains("'F 0 0 7'"));
  write(scheme, R"({"microbatches": 100000000, "placement": [0, 1], "schedule": [[], []]})");
  CHECK_THROWS_WITH(run_pipeline({"simulate", "--stages", stages, "--scheme", scheme}),
                    Catch::Contains(scheme + ": microbatches") && Catch::Contains("exceeds the limit"));
  CHECK_THROWS_WITH(with({"--schedule", "interleaved:x"}), Catch::Contains("interleaved:x"));
  CHECK_THROWS_WITH(with({"--schedule", "zb:2"}), Catch::Contains("zb:2"));
  CHECK_THROWS_WITH(with({"--schedule", "magic"}), Catch::Contains("unknown schedule 'magic'") && Catch::Contains("zbv"));
}

TEST_CASE("pipeline compare takes a comma list of schedules", "[cli][pipeline]") {
  TempDir dir;
  const std::string stages = dir.file("stages.json");
  write(stages, kStages);
  json both = run_json({"compare", "--stages", stages, "--schedules", "gpipe,1f1b"});
  REQUIRE(both.is_array());
  REQUIRE(both.size() == 2);
  CHECK(both[0]["schedule"] == "gpipe");
  CHECK(both[1]["schedule"] == "1f1b");
  // p = 2, m = 2, F = 1, BW = 2, hop 0.1: GPipe and 1F1B both take F0 F1 on device 0, then the
  // chain F1 -> device 1 -> BW1 BW0 ... : (m + p - 1)(F + BW) + 2(p - 1) x hop = 9.2.
  CHECK(both[0]["iteration_time"].get<double>() == Approx(9.2));
  CHECK(both[1]["iteration_time"].get<double>() == Approx(9.2));
}

TEST_CASE("pipeline compare runs the schedules these sizes allow and says why the others cannot be built",
          "[cli][pipeline]") {
  TempDir dir;
  const std::string stages = dir.file("stages.json");
  write(stages, kStages);
  // Interleaving needs the microbatches (3) to be a multiple of the devices (2); 1F1B runs.
  json rows = run_json({"compare", "--stages", stages, "--microbatches", "3", "--schedules", "1f1b,interleaved"});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["schedule"] == "1f1b");
  CHECK(rows[0]["completed"] == true);
  CHECK(rows[1]["schedule"] == "interleaved");
  CHECK(rows[1]["completed"] == false);
  CHECK_THAT(rows[1]["error"].get<std::string>(), Catch::Contains("multiple"));
  CHECK_THAT(run_pipeline({"compare", "--stages", stages, "--microbatches", "3", "--schedules", "1f1b,interleaved"}),
             Catch::Contains("interleaved: not built:"));
  // One schedule that cannot be built, or none that can, is an error; a misspelt name is one at once.
  CHECK_THROWS_WITH(run_pipeline({"compare", "--stages", stages, "--microbatches", "3", "--schedules", "interleaved"}),
                    Catch::Contains("multiple"));
  CHECK_THROWS_WITH(run_pipeline({"compare", "--stages", stages, "--schedules", "1f1b,zbb"}),
                    Catch::Contains("--schedules: unknown schedule 'zbb'"));
  CHECK_THROWS_WITH(run_pipeline({"tune", "--stages", stages, "--schedules", "1f1b,zbb", "--no-store"}),
                    Catch::Contains("--schedules: unknown schedule 'zbb'"));
}

TEST_CASE("pipeline tune that finds no scheme fitting in memory exits 1", "[cli][pipeline]") {
  // Each stage's F allocates 4 and the devices hold 1: no order fits.
  TempDir dir;
  const std::string stages = dir.file("nofit.json");
  write(stages, R"({"n_stages": 2, "n_micro": 2, "cost_f": 1, "cost_b": 1, "cost_w": 1, "mem_f": 4, "mem_b": -3,
                    "mem_w": -1, "max_mem": 1})");
  int code = -1;
  const std::string out = gantry::testing::run_verbs({"pipeline", "tune", "--stages", stages, "--no-store", "--budget", "5s"}, &code);
  CHECK(code == 1);
  CHECK_THAT(out, Catch::Contains("no scheme found that fits in memory"));
  code = -1;
  gantry::testing::run_verbs({"pipeline", "tune", "--stages", stages, "--no-store", "--budget", "5s", "-f", "json"}, &code);
  CHECK(code == 1);
}

TEST_CASE("pipeline tune: the tuned scheme round-trips through --save-scheme / --scheme with the same time",
          "[cli][pipeline]") {
  TempDir dir;
  const std::string file = dir.file("tuned.json");
  const std::vector<std::string> model = {"--model", "nemotron-h-8b", "--pp", "4", "--microbatches", "8"};
  auto args = model;
  args.insert(args.begin(), "tune");
  for (const char* a : {"--max-chunks", "2", "--no-store", "--save-scheme", file.c_str()}) args.push_back(a);
  json tuned = run_json(args);
  REQUIRE(tuned["tuned"]["completed"] == true);
  CHECK(tuned["tuned"]["out_of_memory"] == false);
  // Never slower than the best baseline it started from (ZB on a compute-balanced partition).
  double zb = 0;
  for (const json& row : tuned["baselines"])
    if (row["scheme"] == "zb / compute") zb = row["iteration_time"];
  REQUIRE(zb > 0);
  CHECK(tuned["tuned"]["iteration_time"].get<double>() <= zb);
  args = model;
  args.insert(args.begin(), "simulate");
  args.push_back("--scheme");
  args.push_back(file);
  json loaded = run_json(args);
  CHECK(loaded["iteration_time"] == tuned["tuned"]["iteration_time"]);
  CHECK(loaded["peak_memory"] == tuned["tuned"]["peak_memory"]);
}

TEST_CASE("pipeline tune: bad flags are errors naming the flag", "[cli][pipeline]") {
  CHECK_THROWS_WITH(run_pipeline({"tune", "--model", "llama-3-8b", "--pp", "2", "--budget", "soon", "--no-store"}),
                    Catch::Contains("--budget 'soon'"));
  CHECK_THROWS_WITH(run_pipeline({"tune", "--model", "no-such-model", "--no-store"}), Catch::Contains("no-such-model"));
}

TEST_CASE("pipeline tune stores its best: query best and export answer it, a second run resumes from it",
          "[cli][pipeline]") {
  TempDir dir;
  const std::string data = dir.file("data");
  const std::vector<std::string> problem = {"--model", "llama-3-8b", "--pp", "2", "--microbatches", "4", "--data", data};
  auto args = problem;
  args.insert(args.begin(), "tune");
  args.insert(args.end(), {"--max-chunks", "2"});
  json first = run_json(args);
  REQUIRE(first["tuned"]["completed"] == true);
  const double tuned = first["tuned"]["iteration_time"];

  std::vector<std::string> query = {"query", "best"};
  query.insert(query.end(), problem.begin(), problem.end());
  query.insert(query.end(), {"-f", "json"});
  json best = json::parse(gantry::testing::run_verbs(query));
  CHECK(best["iteration_time"] == tuned);
  CHECK(best["method"] == "pipeline-tune");
  CHECK(best["scheme"]["format"] == "gantry-pipeline-scheme");

  // The exported scheme simulates to the stored time.
  std::vector<std::string> exported = {"query", "export"};
  exported.insert(exported.end(), problem.begin(), problem.end());
  const std::string file = dir.file("best.json");
  write(file, gantry::testing::run_verbs(exported));
  json simulated = run_json({"simulate", "--model", "llama-3-8b", "--pp", "2", "--scheme", file});
  CHECK(simulated["iteration_time"] == tuned);

  // A second run starts from the stored best: never slower, and it says so.
  args = problem;
  args.insert(args.begin(), "tune");
  args.insert(args.end(), {"--max-chunks", "1"});  // alone it could not find the 2-chunk best
  const std::string text = run_pipeline(args);
  CHECK_THAT(text, Catch::Contains("resumed from the stored best"));
  json again = run_json(args);
  CHECK(again["tuned"]["iteration_time"].get<double>() <= tuned);

  // Another problem (more microbatches) has no stored best.
  std::vector<std::string> other = {"query", "best", "--model", "llama-3-8b", "--pp", "2", "--microbatches", "8",
                                    "--data", data};
  CHECK_THROWS_WITH(gantry::testing::run_verbs(other), Catch::Contains("no stored placement or scheme"));
}

TEST_CASE("pipeline tune --exact needs a model and a duration", "[cli][pipeline]") {
  const std::string stages = std::string(GANTRY_SOURCE_DIR) + "/configs/pipelines/zb-example.json";
  CHECK_THROWS_WITH(run_pipeline({"tune", "--stages", stages, "--exact", "10s", "--no-store"}),
                    Catch::Contains("--exact needs a model"));
  CHECK_THROWS_WITH(run_pipeline({"tune", "--model", "llama-3-8b", "--pp", "2", "--exact", "later", "--no-store"}),
                    Catch::Contains("--exact 'later'"));
}
