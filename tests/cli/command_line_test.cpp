// The command line as a user meets it: the whole `gantry` app in-process (gantry_main), with its
// exit code, stdout and stderr.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "cli/commands.hpp"
#include "tests/cli/cli_runner.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

using gantry::testing::TempDir;

namespace {

using Run = gantry::testing::CliRun;
using gantry::testing::run_cli;

const std::string kData = GANTRY_TEST_DATA;

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("the version flag, unknown verbs and parser errors speak as gantry", "[cli]") {
  Run version = run_cli({"--version"});
  CHECK(version.code == 0);
  CHECK_THAT(version.out, Catch::StartsWith("gantry 0."));
  Run verb = run_cli({"frobnicate"});
  CHECK(verb.code == 2);
  CHECK_THAT(verb.err, Catch::Contains("gantry: unknown verb 'frobnicate'") && Catch::Contains("place"));
  Run sub_verb = run_cli({"pipeline", "simluate"});  // a verb's own verbs too (not "A subcommand is required")
  CHECK(sub_verb.code == 2);
  CHECK_THAT(sub_verb.err, Catch::Contains("unknown verb 'simluate' of `gantry pipeline`") && Catch::Contains("simulate, compare, tune"));
  Run missing = run_cli({"db"});
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("`gantry db` needs a verb: backup, verify, stats, resimulate"));
  CHECK(run_cli({"db", "--help"}).code == 0);
  Run flag = run_cli({"place", "--bogus"});
  CHECK(flag.code == 1);
  CHECK_THAT(flag.err, Catch::StartsWith("gantry: ") && Catch::Contains("--bogus"));
}

TEST_CASE("numeric options outside their range are refused", "[cli]") {
  const std::string stg = kData + "/stg/50/rand0001.stg";
  const std::vector<std::vector<std::string>> bad = {
      {"--noise", "nan"}, {"--noise", "inf"}, {"--noise", "-1"}, {"--evals", "-1"}, {"--evals", "0"},
      {"--budget", "0s"}, {"--samples", "0"},  {"--streams", "99999"}, {"--noise-samples", "0"},
      {"--seed", "-1"}, {"--seed", "18446744073709551616"}, {"--evals", "1e3"}, {"--noise-seed", "x"},
  };
  for (const auto& extra : bad) {
    std::vector<std::string> args = {"place", "--graph", stg, "--cluster", "identical:2", "--method", "random"};
    args.insert(args.end(), extra.begin(), extra.end());
    Run run = run_cli(args);
    INFO(extra[0] << " " << extra[1]);
    CHECK(run.code != 0);
    CHECK_THAT(run.err, Catch::StartsWith("gantry: ") && Catch::Contains(extra[0] == "--budget" ? "positive" : extra[0]));
  }
  // Whole numbers are read as written: -1 and 2^64 wrapped or saturated to 2^64 - 1 silently, and
  // "1e3" was "not in range" of a number it was not read as.
  Run seed = run_cli({"place", "--graph", stg, "--cluster", "identical:2", "--method", "random", "--seed", "-1"});
  CHECK_THAT(seed.err, Catch::StartsWith("gantry: --seed: '-1' is not a whole number from 0 to 18446744073709551615"));
  Run evals = run_cli({"place", "--graph", stg, "--cluster", "identical:2", "--method", "search", "--evals", "1e3"});
  CHECK_THAT(evals.err, Catch::StartsWith("gantry: --evals: '1e3' is not a whole number from 1 to"));
  Run largest = run_cli({"place", "--graph", stg, "--cluster", "identical:2", "--method", "random", "--seed", "18446744073709551615"});
  CHECK(largest.code == 0);
}

TEST_CASE("an empty --stages, --hf-config or --profile file is an error naming the flag and the file", "[cli]") {
  TempDir dir;
  const std::string empty = dir.file("empty.json");
  write(empty, " \n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"pipeline", "simulate", "--stages", empty},
        {"pipeline", "simulate", "--hf-config", empty, "--cluster", "8xH100-nvswitch", "--pp", "2"},
        {"pipeline", "simulate", "--model", "llama-3-8b", "--cluster", "8xH100-nvswitch", "--pp", "2", "--profile", empty}}) {
    const std::string flag = *(std::find(args.begin(), args.end(), empty) - 1);
    Run run = run_cli(args);
    INFO(flag << ": " << run.err);
    CHECK(run.code == 1);  // before: "unknown model ''", and an empty profile was used as none
    CHECK_THAT(run.err, Catch::StartsWith("gantry: " + flag + " " + empty + ": the file is empty"));
  }
}

TEST_CASE("a file flag given an empty path is refused, naming the flag", "[cli]") {
  // An empty path read as "not given": --trace '' wrote nothing and said nothing.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"place", "--workload", "random:ops=10", "--cluster", "identical:2", "-m", "cp", "--trace", ""},
        {"place", "--graph", "", "--cluster", "identical:2"},
        {"pipeline", "simulate", "--stages", ""}}) {
    Run run = run_cli(args);
    INFO(args[args.size() - 2] << ": " << run.err);
    CHECK(run.code == 1);
    CHECK_THAT(run.err, Catch::Contains("an empty path"));
  }
}

TEST_CASE("tune refuses a batch longer than a minute, or not above 0, naming --batch", "[cli]") {
  for (const char* batch : {"61s", "1e20s", "0s"}) {
    Run run = run_cli({"tune", "--workload", "random:ops=10", "--cluster", "identical:2", "--budget", "1s", "--batch", batch,
                       "--data", "unused"});
    INFO(batch << ": " << run.err);
    CHECK(run.code == 1);
    CHECK_THAT(run.err, Catch::StartsWith("gantry: --batch " + std::string(batch) + ": "));
  }
}

TEST_CASE("a duration past the largest number of seconds is refused, not a budget that never ends", "[cli]") {
  // 1e305 hours is 3.6e308 s, past the largest double (1.8e308): it read as infinity, and a job
  // with an infinite budget ignored Ctrl-C.
  Run run = run_cli({"tune", "--workload", "random:ops=10", "--cluster", "identical:2", "--budget", "1e305h", "--data", "unused"});
  CHECK(run.code == 1);
  CHECK_THAT(run.err, Catch::Contains("invalid duration '1e305h': too long to count in seconds"));
}

TEST_CASE("a budget longer than a year runs, with a year as its horizon", "[cli]") {
  // The heuristics' task took the whole budget as its time; past a year the worker could not read
  // it, dropped it, and the job waited for it until its lease (a year) ran out.
  TempDir dir;
  Run run = run_cli({"tune", "--workload", "random:ops=10", "--cluster", "identical:2", "--budget", "9000h", "--evals", "50",
                     "--data", dir.file("data")});
  CHECK(run.code == 0);
  CHECK_THAT(run.out, Catch::Contains("50 evals"));
  CHECK_THAT(run.err, !Catch::Contains("dropped an assign"));
}

TEST_CASE("tune bounds --batch-evals and --parallelism, naming the flag", "[cli]") {
  Run evals = run_cli({"tune", "--workload", "random:ops=10", "--cluster", "identical:2", "--batch-evals", "200000000", "--data", "unused"});
  CHECK(evals.code == 1);
  CHECK_THAT(evals.err, Catch::StartsWith("gantry: --batch-evals 200000000: must be 0 to 100000000"));
  Run wide = run_cli({"tune", "--workload", "random:ops=10", "--cluster", "identical:2", "--parallelism", "70000", "--data", "unused"});
  CHECK(wide.code == 1);
  CHECK_THAT(wide.err, Catch::StartsWith("gantry: --parallelism 70000: must be 0 (every slot) to 65536"));
}

TEST_CASE("a coordinator refuses an endpoint it cannot bind as written", "[cli]") {
  TempDir dir;
  for (const auto& [bind, why] : std::vector<std::pair<std::string, std::string>>{
           {"tcp://127.0.0.1:99999", "the port must be a number from 0 to 65535"},  // ZeroMQ bound 34463
           {"tcp://127.0.0.1:-1", "the port must be a number"},
           {"foo", "expected tcp://HOST:PORT, ipc://PATH or inproc://NAME"},
           {"tcp://:7700", "no host before the port"}}) {
    Run run = run_cli({"coordinator", "--bind", bind, "--data", dir.file("data")});
    INFO(bind);
    CHECK(run.code == 1);
    CHECK_THAT(run.err, Catch::Contains("--bind: endpoint '" + bind + "': " + why));
  }
}

TEST_CASE("a coordinator whose endpoint is taken leaves no store behind in a folder it made, and keeps one that was there", "[cli]") {
  TempDir dir;
  // A listening TCP socket holds the port.
  const int held = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(held >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  REQUIRE(bind(held, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(listen(held, 1) == 0);
  socklen_t size = sizeof address;
  REQUIRE(getsockname(held, reinterpret_cast<sockaddr*>(&address), &size) == 0);
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  Run fresh = run_cli({"coordinator", "--bind", endpoint, "--data", dir.file("fresh/a/b")});
  CHECK(fresh.code == 1);
  CHECK_THAT(fresh.err, Catch::Contains("cannot bind " + endpoint));
  CHECK_FALSE(std::filesystem::exists(dir.file("fresh")));  // and the folders made on the way
  CHECK(std::filesystem::exists(dir.path()));
  std::filesystem::create_directories(dir.file("there"));
  write(dir.file("there/keep.txt"), "a user's file");
  Run there = run_cli({"coordinator", "--bind", endpoint, "--data", dir.file("there")});
  CHECK(there.code == 1);
  CHECK(std::filesystem::exists(dir.file("there/keep.txt")));
  close(held);
}

TEST_CASE("simulate refuses a placement made for another graph or with an impossible index", "[cli]") {
  TempDir dir;
  const std::string stg1 = kData + "/stg/50/rand0001.stg", stg2 = kData + "/stg/50/rand0002.stg";
  Run placed = run_cli({"place", "--graph", stg1, "--cluster", "identical:2", "--method", "cp", "-f", "json"});
  REQUIRE(placed.code == 0);
  write(dir.file("p.json"), placed.out);
  Run same = run_cli({"simulate", "--graph", stg1, "--cluster", "identical:2", "--placement", dir.file("p.json")});
  CHECK(same.code == 0);
  Run other = run_cli({"simulate", "--graph", stg2, "--cluster", "identical:2", "--placement", dir.file("p.json")});
  CHECK(other.code == 1);
  CHECK_THAT(other.err, Catch::Contains("the placement was made for graph"));
  nlohmann::json huge = nlohmann::json::parse(placed.out);
  huge["placement"][3] = 1099511627776LL;  // 2^40 would wrap to device 0 in 32 bits
  write(dir.file("huge.json"), huge.dump());
  Run wrapped = run_cli({"simulate", "--graph", stg1, "--cluster", "identical:2", "--placement", dir.file("huge.json")});
  CHECK(wrapped.code == 1);
  CHECK_THAT(wrapped.err, Catch::Contains("$.placement[3]: 1099511627776 is not a device index"));
  // A newer placement file, or another kind of gantry file, is refused by name (it was read as one).
  for (const auto& [key, value, expected] :
       {std::tuple<std::string, nlohmann::json, std::string>{"version", 9, "$.version: 9 is not supported"},
        {"format", "gantry-graph", "$.format: \"gantry-graph\" is not a gantry-placement file"}}) {
    nlohmann::json odd = nlohmann::json::parse(placed.out);
    odd[key] = value;
    write(dir.file("odd.json"), odd.dump());
    Run refused = run_cli({"simulate", "--graph", stg1, "--cluster", "identical:2", "--placement", dir.file("odd.json")});
    CHECK(refused.code == 1);
    CHECK_THAT(refused.err, Catch::Contains(dir.file("odd.json") + ": " + expected));
  }
}

TEST_CASE("simulate --noise reports the mean and spread over --repeats draws", "[cli]") {
  // One op of cost 10: its makespan is 10 times a log-normal factor with mean 1 and, for sigma 0.2,
  // standard deviation sqrt(exp(0.04) - 1) = 0.2020. Over 4000 draws the sample mean is within
  // 0.1 (3 standard errors) of 10 and the sample sd within 0.1 of 2.02.
  TempDir dir;
  write(dir.file("one.json"), R"({"ops":[{"name":"x","cost":10}]})");
  write(dir.file("p.json"), R"({"placement":[0]})");
  Run run = run_cli({"simulate", "--graph", dir.file("one.json"), "--cluster", "identical:1", "--placement",
                    dir.file("p.json"), "--noise", "0.2", "--repeats", "4000", "-f", "json"});
  REQUIRE(run.code == 0);
  auto j = nlohmann::json::parse(run.out);
  CHECK(j["noise"]["draws"] == 4000);
  CHECK(j["noise"]["mean"].get<double>() == Approx(10).margin(0.1));
  CHECK(j["noise"]["stddev"].get<double>() == Approx(10 * std::sqrt(std::exp(0.04) - 1)).margin(0.1));
  CHECK(j["noise"]["min"].get<double>() < j["noise"]["max"].get<double>());
  Run no_noise = run_cli({"simulate", "--graph", dir.file("one.json"), "--cluster", "identical:1", "--placement",
                         dir.file("p.json"), "--repeats", "5"});
  CHECK(no_noise.code == 1);
  CHECK_THAT(no_noise.err, Catch::Contains("--repeats needs --noise"));
}

TEST_CASE("place --evals is the whole evaluation budget of search", "[cli]") {
  for (const char* evals : {"5", "40", "300"}) {
    Run run = run_cli({"place", "--graph", kData + "/stg/50/rand0001.stg", "--cluster", "identical:4", "--method", "search",
                      "--evals", evals, "-f", "json"});
    REQUIRE(run.code == 0);
    CHECK(nlohmann::json::parse(run.out)["evaluations"].get<long>() == std::stol(evals));
  }
}

TEST_CASE("the DOPPLER simulator refuses options it does not have", "[cli]") {
  for (const char* option : {"--noise", "--memory"}) {
    std::vector<std::string> args = {"place", "--graph", kData + "/doppler/ffnn_192nodes.txt", "--cluster", "identical:2",
                                     "--sim", "doppler", "--method", "cp", option};
    if (std::string(option) == "--noise") args.push_back("0.1");
    Run run = run_cli(args);
    INFO(option);
    CHECK(run.code == 1);
    CHECK_THAT(run.err, Catch::Contains("--sim doppler") && Catch::Contains(option));
  }
}

TEST_CASE("placement files: overflowing numbers and malformed fingerprints are errors naming the file", "[cli]") {
  TempDir dir;
  const std::string stg = kData + "/stg/50/rand0001.stg";
  std::string devices = "[0";
  for (int i = 1; i < 50; ++i) devices += ",0";
  devices += "]";
  write(dir.file("big.json"), R"({"placement":)" + devices + R"(,"priority":[1e400]})");
  Run big = run_cli({"simulate", "--graph", stg, "--cluster", "identical:2", "--placement", dir.file("big.json")});
  CHECK(big.code == 1);
  CHECK_THAT(big.err, Catch::Contains("big.json: invalid JSON"));
  write(dir.file("fp.json"), R"({"placement":)" + devices + R"(,"graph_fingerprint":"48c8cca2"})");
  Run fp = run_cli({"simulate", "--graph", stg, "--cluster", "identical:2", "--placement", dir.file("fp.json")});
  CHECK(fp.code == 1);
  CHECK_THAT(fp.err, Catch::Contains("fp.json: $.graph_fingerprint: \"48c8cca2\" is not a graph fingerprint"));
}

TEST_CASE("tune --method doppler refuses the search settings it would ignore", "[cli]") {
  for (const char* flag : {"--patience", "--batch", "--batch-evals", "--parallelism"}) {
    Run run = run_cli({"tune", "--method", "doppler", "--workload", "chainmm", "--budget", "1s", flag, "2"});
    INFO(flag << ": " << run.err);
    CHECK(run.code == 1);
    CHECK_THAT(run.err, Catch::Contains(std::string("tune --method doppler: ") + flag + " is a setting of --method search"));
  }
}

TEST_CASE("job files: a pipeline job's keys are pipeline tune's flags, checked before anything is sent", "[cli]") {
  TempDir dir;
  const std::string file = dir.file("job.yaml");
  // Nothing listens there: each error must come before any attempt to reach it.
  auto submit = [&](const std::string& text) {
    write(file, text);
    return run_cli({"submit", file, "--coordinator", "tcp://127.0.0.1:1", "--timeout", "1"});
  };
  Run unknown = submit("kind: pipeline\nmodel: llama-3-8b\ndata: /tmp/x\n");
  CHECK(unknown.code == 1);
  CHECK_THAT(unknown.err, Catch::Contains(file + ": unknown key \"data\""));
  Run bad = submit("kind: pipeline\nmodel: llama-3-8b\npp: 0\n");
  CHECK(bad.code == 1);
  CHECK_THAT(bad.err, Catch::Contains(file + ": --pp 0: the pipeline degree must be at least 1"));
  Run model = submit("kind: pipeline\nmodel: nope\n");
  CHECK_THAT(model.err, Catch::StartsWith("gantry: " + file + ": unknown model 'nope'"));
  Run chunks = submit("kind: pipeline\nmodel: llama-3-8b\nmax-chunks: 40\n");
  CHECK(chunks.code == 1);
  CHECK_THAT(chunks.err, Catch::Contains(file + ": --max-chunks"));
  Run missing = submit("kind: pipeline\nmodel: llama-3-8b\nhf-config: nowhere.json\n");
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains("give exactly one of --model"));
  // A tune job's values get their flags' range checks, named with the file.
  Run streams = submit("workload: chainmm\ncluster: identical:2\nstreams: 5000\n");
  CHECK(streams.code == 1);
  CHECK_THAT(streams.err, Catch::Contains(file + ": --streams 5000: not in range 0 to 1024"));
  Run noise = submit("workload: chainmm\ncluster: identical:2\nnoise: 7\n");
  CHECK_THAT(noise.err, Catch::Contains(file + ": --noise 7.000: not in range 0 to 3"));
  Run budget = submit("workload: chainmm\ncluster: identical:2\nbudget: abc\n");
  CHECK_THAT(budget.err, Catch::Contains(file + ": --budget"));
  // A key set twice: yaml-cpp would read the first and drop the second without a word.
  Run twice = submit("workload: chainmm\ncluster: identical:2\nbudget: 1s\nbudget: 5m\n");
  CHECK(twice.code == 1);
  CHECK_THAT(twice.err, Catch::StartsWith("gantry: " + file + ":4: key \"budget\" is set again (first set on line 3)"));
  Run kind = submit("kind: train\nworkload: chainmm\n");
  CHECK(kind.code == 1);
  CHECK_THAT(kind.err, Catch::Contains("\"train\" is not a job kind a job file describes (tune, pipeline)"));
  // A good file gets as far as the (absent) coordinator.
  Run good = submit("kind: pipeline\nmodel: llama-3-8b\ncluster: 8xH100-nvswitch\npp: 2\nmicrobatches: 4\n");
  CHECK(good.code == 1);
  CHECK_THAT(good.err, Catch::Contains("submitting to tcp://127.0.0.1:1"));
  // A cluster file is read from the job file's folder, as a graph is, and its errors name the job file.
  write(dir.file("two.yaml"), gantry::testing::read_text(std::string(GANTRY_SOURCE_DIR) + "/configs/clusters/cpu-2.yaml"));
  Run cluster_file = submit("workload: chainmm\ncluster: two.yaml\n");
  CHECK_THAT(cluster_file.err, Catch::Contains("submitting to tcp://127.0.0.1:1"));
  Run no_cluster = submit("workload: chainmm\ncluster: three.yaml\n");
  CHECK_THAT(no_cluster.err, Catch::StartsWith("gantry: " + file + ": key \"cluster\": unknown cluster '" + dir.file("three.yaml")));
  // A job file that is a folder: the path and why, not the stream library's words.
  Run folder = run_cli({"submit", dir.path(), "--coordinator", "tcp://127.0.0.1:1", "--timeout", "1"});
  CHECK(folder.code == 1);
  CHECK_THAT(folder.err, Catch::StartsWith("gantry: job file " + dir.path() + ": is a directory"));
}
