// tune, query, db and jobs through the CLI's entry points, on a temporary data directory.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include "core/profile_table.hpp"
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/cli_common.hpp"
#include "actors/tune_job.hpp"
#include "cli/commands.hpp"
#include "core/graph_io.hpp"
#include "sim/model_version.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "storage/store.hpp"
#include "tests/cli/cli_runner.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace gantry;
using namespace gantry::cli;
using gantry::testing::TempDir;

namespace {

std::string gantry_cli(const std::vector<std::string>& args, int* exit_code = nullptr) {
  return gantry::testing::run_verbs(args, exit_code);
}

const std::string kFfnn = std::string(GANTRY_TEST_DATA) + "/doppler/ffnn_192nodes.txt";

// Three ops: a (3) feeds b (4) and c (5); the file's path.
std::string write_abc_graph(const TempDir& data) {
  const std::string path = data.file("abc.json");
  std::ofstream out(path);
  out << R"({"format": "gantry-graph", "version": 1, "ops": [{"id": 0, "cost": 3}, {"id": 1, "cost": 4},
            {"id": 2, "cost": 5}], "edges": [[0, 1], [0, 2]]})";
  return path;
}

// A best of that graph stored under `runtime` by model `version` (a, b on device 0, c on device 1),
// with the graph and the cluster content a re-simulation reads.
void put_stale_abc(Store& store, const std::string& graph_file, const Fingerprint& runtime, const std::string& cluster_text,
                   int version, const std::string& sim_options) {
  const Graph graph = read_graph_file(graph_file).value();
  REQUIRE(store.put_graph(fingerprint(graph), graph_to_json(graph)).ok());
  REQUIRE(store.put_cluster(runtime, cluster_text).ok());
  ScheduleRecord r;
  r.graph = fingerprint(graph);
  r.cluster = runtime;
  r.graph_label = graph_file;
  r.cluster_name = "identical:2";
  r.method = "search";
  r.sim = "default";
  r.sim_options = sim_options;
  r.makespan = 99;  // what the old model said
  r.placement.device = {0, 0, 1};
  r.model_version = version;
  REQUIRE(store.put_if_better(r).value());
}

}  // namespace

TEST_CASE("query finds what tune stored, by the same key; jobs and verify see the job", "[cli]") {
  TempDir data;
  const std::vector<std::string> problem = {"--graph", kFfnn, "--cluster", "identical:4", "--sim", "doppler"};
  auto with = [&](std::vector<std::string> head, std::vector<std::string> tail = {}) {
    head.insert(head.end(), problem.begin(), problem.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  auto tuned = nlohmann::json::parse(
      gantry_cli(with({"tune", "--data", data.path(), "--evals", "300", "--rollouts", "2", "-f", "json"})));
  CHECK(tuned["state"] == "COMPLETE");
  CHECK(tuned["evaluations"] == 300);
  CHECK(tuned["stop_reason"] == "evaluation budget used");

  auto best = nlohmann::json::parse(gantry_cli(with({"query", "best", "--data", data.path(), "-f", "json"})));
  CHECK(best["makespan"] == tuned["makespan"]);
  CHECK(best["graph_fingerprint"] == tuned["graph_fingerprint"]);
  CHECK(best["runtime_fingerprint"] == tuned["runtime_fingerprint"]);
  CHECK(best["job"] == tuned["job"]);
  CHECK(best["model_version"] == kModelVersion);
  CHECK(best["stale"] == false);

  // The short key `query list` prints finds the same record.
  const std::string list = gantry_cli({"query", "list", "--data", data.path()});
  const std::string short_key = tuned["graph_fingerprint"].get<std::string>().substr(0, 8) + ":" +
                                tuned["runtime_fingerprint"].get<std::string>().substr(0, 8);
  CHECK_THAT(list, Catch::Contains(short_key) && Catch::Contains("current"));
  auto by_key = nlohmann::json::parse(
      gantry_cli({"query", "best", "--data", data.path(), "--fingerprint", short_key, "-f", "json"}));
  CHECK(by_key["makespan"] == tuned["makespan"]);
  CHECK_THROWS_WITH(gantry_cli({"query", "best", "--data", data.path(), "--fingerprint", "0000:0000"}),
                    Catch::Contains("no stored best") && Catch::Contains("0000:0000"));
  CHECK_THROWS_WITH(gantry_cli({"query", "best", "--data", data.path(), "--fingerprint", "xyz"}),
                    Catch::Contains("GRAPH:RUNTIME"));

  // A different runtime is a different key: nothing stored there.
  // It says which bests the graph has under other keys (here the DOPPLER runtime's), and how to read one.
  CHECK_THROWS_WITH(gantry_cli({"query", "best", "--data", data.path(), "--graph", kFfnn, "--cluster", "identical:4"}),
                    Catch::Contains("no stored placement") && Catch::Contains("bests under other simulator options") &&
                        Catch::Contains("sim doppler") &&
                        Catch::Contains("--fingerprint " + tuned["graph_fingerprint"].get<std::string>() + ":" +
                                        tuned["runtime_fingerprint"].get<std::string>()));

  auto jobs = nlohmann::json::parse(gantry_cli({"jobs", "--data", data.path(), "-f", "json"}));
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0]["id"] == tuned["job"]);
  CHECK(jobs[0]["state"] == "COMPLETE");
  CHECK(jobs[0]["evaluations"] == 300);
  CHECK(jobs[0]["owner_pid"] == static_cast<long>(getpid()));
  CHECK_THAT(gantry_cli({"db", "verify", "--data", data.path()}), Catch::Contains("no problems found"));

  // The stored cluster is its content, which reads back to the key's cluster.
  auto store = Store::open_read_only(data.path()).value();
  Fingerprint runtime;
  REQUIRE(Fingerprint::from_hex(tuned["runtime_fingerprint"].get<std::string>(), runtime));
  auto yaml = store->cluster(runtime).value();
  REQUIRE(yaml.has_value());
  SimOptions doppler;
  doppler.doppler = true;
  CHECK(runtime_fingerprint(Cluster::from_yaml(*yaml, "stored").value(), doppler) == runtime);
}

TEST_CASE("a stale best is shown as stale and db resimulate recomputes it", "[cli]") {
  TempDir data;
  // On identical:2 (free links) b and c run side by side after a: makespan 3 + max(4, 5) = 8.
  const std::string graph_file = write_abc_graph(data);
  const Cluster cluster = Cluster::identical(2).value();
  const std::string db = data.file("db");
  // What gantry wrote before model versions: no version field, the --cluster string as cluster.
  put_stale_abc(*Store::open(db).value(), graph_file, runtime_fingerprint(cluster, SimOptions{}, 1), "identical:2", 1, "");
  const std::vector<std::string> key = {"--data", db, "--graph", graph_file, "--cluster", "identical:2"};
  auto query = [&](const std::string& verb, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"query", verb};
    args.insert(args.end(), key.begin(), key.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return gantry_cli(args);
  };
  CHECK_THROWS_WITH(query("best"), Catch::Contains("stale") && Catch::Contains("model version 1") &&
                                       Catch::Contains("db resimulate") && !Catch::Contains("no stored placement"));
  CHECK_THAT(gantry_cli({"query", "list", "--data", db}), Catch::Contains("stale (model v1)"));

  const std::string report = gantry_cli({"db", "resimulate", "--data", db});
  CHECK_THAT(report, Catch::Contains("1 stale best(s)") && Catch::Contains("1 re-simulated") &&
                         Catch::Contains("1 stored"));
  auto best = nlohmann::json::parse(query("best", {"-f", "json"}));
  CHECK(best["makespan"] == 8.0);
  CHECK(best["model_version"] == kModelVersion);
  CHECK(best["method"] == "resimulated:search");
  auto history = nlohmann::json::parse(query("history", {"-f", "json"}));
  REQUIRE(history.size() == 1);
  CHECK(history[0]["makespan"] == 8.0);
  // The stale record's new key holds a current best: a second run re-simulates nothing.
  const std::string again = gantry_cli({"db", "resimulate", "--data", db});
  CHECK_THAT(again, Catch::Contains("0 stored"));
  CHECK_THAT(again, Catch::Contains("1 already current") && Catch::Contains("0 re-simulated"));
}

TEST_CASE("a stale best tuned --profiled is re-simulated with the store's profiles", "[cli]") {
  TempDir data;
  const std::string graph_file = write_abc_graph(data);
  const Cluster cluster = Cluster::identical(2).value();
  const std::string db = data.file("db");
  ProfileTable profiles;  // ops beside a busy neighbour take 1.5x
  profiles.add_co_run_slowdown("identical", 1.5);
  {
    auto store = Store::open(db).value();
    REQUIRE(store->add_profiles(profiles).ok());
    put_stale_abc(*store, graph_file, runtime_fingerprint(cluster, SimOptions{}, &profiles, kModelVersion - 1), cluster.to_yaml(),
                  kModelVersion - 1, sim_options_json(SimOptions{}));
  }
  const std::vector<std::string> best = {"query", "best", "--data", db, "--graph", graph_file, "--cluster", "identical:2", "--profiled"};
  CHECK_THROWS_WITH(gantry_cli(best), Catch::Contains("stale") && !Catch::Contains("no stored placement"));
  CHECK_THAT(gantry_cli({"db", "resimulate", "--data", db}), Catch::Contains("1 re-simulated") && Catch::Contains("1 stored"));
  // By hand: op 0 alone, 3; then ops 1 (4) and 2 (5) side by side on the two devices, 1.5x each:
  // 3 + 7.5.
  std::vector<std::string> json = best;
  json.insert(json.end(), {"-f", "json"});
  auto now = nlohmann::json::parse(gantry_cli(json));
  CHECK(now["makespan"] == 10.5);
  CHECK(now["model_version"] == kModelVersion);
}

TEST_CASE("SIGTERM and SIGHUP during tune cancel the job: exit 130, best kept", "[cli]") {
  for (int signal : {SIGTERM, SIGHUP}) {
    INFO(signal);
    TempDir data;
    struct sigaction before {};
    sigaction(signal, nullptr, &before);
    std::thread killer([signal, before] {
      // Wait until tune has installed its handler, then signal this process.
      for (int i = 0; i < 2000; ++i) {
        struct sigaction current {};
        sigaction(signal, nullptr, &current);
        if (current.sa_handler != before.sa_handler) {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          kill(getpid(), signal);
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
    int code = -1;
    const std::string out = gantry_cli({"tune", "--data", data.path(), "--graph", kFfnn, "--cluster", "identical:4",
                                        "--sim", "doppler", "--budget", "60s", "--rollouts", "2", "-f", "json"},
                                       &code);
    killer.join();
    CHECK(code == kExitCancelled);
    auto j = nlohmann::json::parse(out);
    CHECK(j["state"] == "CANCELLED");
    auto store = Store::open_read_only(data.path()).value();
    CHECK(store->job(j["job"].get<std::string>()).value()->state == JobState::cancelled);
    Fingerprint g, r;
    REQUIRE(Fingerprint::from_hex(j["graph_fingerprint"].get<std::string>(), g));
    REQUIRE(Fingerprint::from_hex(j["runtime_fingerprint"].get<std::string>(), r));
    CHECK(store->best(g, r).value()->makespan == j["makespan"].get<double>());
    struct sigaction after {};
    sigaction(signal, nullptr, &after);
    CHECK(after.sa_handler == before.sa_handler);  // restored
  }
}

TEST_CASE("query list into a reader that leaves early neither dies of SIGPIPE nor leaves its directory", "[cli]") {
  TempDir data;
  {  // enough rows to overflow a pipe buffer
    auto store = Store::open(data.path()).value();
    for (std::uint64_t i = 0; i < 120; ++i) {
      ScheduleRecord r;
      r.graph = Fingerprint{i + 1, 7};
      r.cluster = Fingerprint{9, 9};
      r.graph_label = std::string(1500, 'g');
      r.makespan = 1;
      r.placement.device = {0};
      REQUIRE(store->put_if_better(r).value());
    }
  }
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    signal(SIGPIPE, SIG_DFL);
    execl(GANTRY_BINARY, GANTRY_BINARY, "query", "list", "--data", data.path().c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char first[64];
  REQUIRE(read(fds[0], first, sizeof first) > 0);
  close(fds[0]);  // like `head -1`
  int status = 0;
  waitpid(child, &status, 0);
  CHECK_FALSE(WIFSIGNALED(status));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGPIPE);
  const std::string mine = "gantry-secondary-" + std::to_string(child) + "-";
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    CHECK(entry.path().filename().string().rfind(mine, 0) != 0);
}

TEST_CASE("store CLI faults: bench store refuses a store, tune caps rollouts, backup needs no lock", "[cli]") {
  TempDir data;
  {
    auto store = Store::open(data.file("db")).value();
    ScheduleRecord r;
    r.graph = Fingerprint{1, 2};
    r.cluster = Fingerprint{3, 4};
    r.makespan = 5;
    r.placement.device = {0};
    REQUIRE(store->put_if_better(r).value());
    // The writer stays open: the backup goes through a read-only instance.
    CHECK_THAT(gantry_cli({"db", "backup", data.file("copy"), "--data", data.file("db")}), Catch::Contains("written to"));
  }
  CHECK(Store::open_read_only(data.file("copy")).value()->list_best().value().size() == 1);
  CHECK_THROWS_WITH(gantry_cli({"bench", "store", "--dir", data.file("db"), "--schedules", "10"}),
                    Catch::Contains("not an empty directory"));
  CHECK(Store::open_read_only(data.file("db")).value()->list_best().value().size() == 1);  // untouched
  CHECK_THROWS_WITH(gantry_cli({"tune", "--data", data.file("t"), "--graph", kFfnn, "--cluster", "identical:2",
                                "--rollouts", "100000"}),
                    Catch::Contains("--rollouts 100000") && Catch::Contains(std::to_string(max_rollouts())));
  CHECK_THROWS_WITH(gantry_cli({"tune", "--data", data.file("t"), "--graph", kFfnn, "--cluster", "identical:2",
                                "--evals", "-1"}),
                    Catch::Contains("--evals -1"));
}

TEST_CASE("train stores a policy, its episodes and its bests; place and query use them", "[cli]") {
  TempDir data;
  const std::vector<std::string> problem = {"--workload", "ffnn:costs=doppler,layers=2", "--cluster", "identical:4",
                                            "--sim", "doppler"};
  auto with = [&](std::vector<std::string> head, std::vector<std::string> tail = {}) {
    head.insert(head.end(), problem.begin(), problem.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  int code = -1;
  const std::string saved = data.path() + "/trained.policy", curve = data.path() + "/trained.csv";
  gantry_cli(with({"train", "--data", data.path(), "--episodes", "64", "--name", "tiny", "--hidden", "8", "--head", "8",
                   "--state", "4", "--steps", "1", "--save", saved, "--curve", curve}),
             &code);
  REQUIRE(code == 0);
  // The store keeps the policy with its curve: `query policy` writes what train wrote.
  const std::string fetched = data.path() + "/fetched.policy", fetched_curve = data.path() + "/fetched.csv";
  const std::string shown = gantry_cli({"query", "policy", "tiny", "--data", data.path(), "--save", fetched, "--curve", fetched_curve}, &code);
  REQUIRE(code == 0);
  CHECK_THAT(shown, Catch::Contains("policy   tiny:1 (dual, il+sim, 4 devices"));
  CHECK(gantry::testing::read_text(fetched) == gantry::testing::read_text(saved));
  CHECK(gantry::testing::read_text(fetched_curve) == gantry::testing::read_text(curve));
  CHECK_FALSE(gantry::testing::read_text(curve).empty());

  auto policies = nlohmann::json::parse(gantry_cli({"query", "policies", "--data", data.path(), "-f", "json"}));
  REQUIRE(policies.size() == 1);
  CHECK(policies[0]["name"] == "tiny");
  CHECK(policies[0]["version"] == 1);
  CHECK(policies[0]["stage"] == "il+sim");
  CHECK(policies[0]["episodes"].get<long>() >= 64);
  CHECK(policies[0]["devices"] == 4);

  // Trained on clusters of two sizes, a policy has no one device count: it says so.
  gantry_cli({"train", "--data", data.path(), "--episodes", "16", "--name", "both", "--hidden", "8", "--head", "8", "--state",
              "4", "--steps", "1", "--workload", "ffnn:costs=doppler,layers=2", "--cluster", "identical:2", "--cluster",
              "identical:3", "--sim", "doppler"},
             &code);
  REQUIRE(code == 0);
  auto both = nlohmann::json::parse(gantry_cli({"query", "policies", "--data", data.path(), "-f", "json"}));
  REQUIRE(both.size() == 2);
  CHECK(both[0]["name"] == "both");
  CHECK(both[0]["devices"] == 0);
  CHECK(both[0]["cluster"] == "identical:2,identical:3");

  // The best placement is stored under the key `tune` would use, as found by method doppler, and
  // re-simulates to its makespan.
  auto best = nlohmann::json::parse(gantry_cli(with({"query", "best", "--data", data.path(), "-f", "json"})));
  CHECK(best["method"] == "doppler");
  CHECK(best["stale"] == false);

  // Its episodes are summarised in the store, one record per batch received.
  {
    auto store = Store::open_read_only(data.path());
    REQUIRE(store.ok());
    auto episodes = store.value()->episodes(best["job"].get<std::string>());
    REQUIRE(episodes.ok());
    long total = 0;
    for (const EpisodeRecord& e : episodes.value()) total += e.candidates;
    CHECK(total >= 64);
  }

  auto placed = nlohmann::json::parse(gantry_cli(with({"place", "--method", "doppler", "--policy", "tiny", "--data", data.path(), "-f", "json"})));
  CHECK(placed["method"] == "doppler");
  CHECK(placed["makespan"].get<double>() > 0);
  CHECK_THROWS_WITH(gantry_cli(with({"place", "--method", "doppler", "--policy", "nosuch", "--data", data.path()})),
                    Catch::Contains("policy 'nosuch' is not in"));
}
