// The cluster across real processes on loopback: a `gantry coordinator` and `gantry worker`
// processes, driven by the client verbs. What must hold: a job's committed evaluations equal what
// it asked for, whatever happens to the workers, and its stored best is the best of its episodes.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <zmq.hpp>
#include <zmq_addon.hpp>
#include <nlohmann/json.hpp>
#include <numeric>
#include <regex>

#include "actors/learner_checkpoint.hpp"
#include "actors/net/wire.hpp"
#include "actors/tune_job.hpp"
#include "core/graph_io.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"
#include "storage/store.hpp"
#include "tests/cli/cli_runner.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"
#include "workloads/workload.hpp"
#include "core/profile_table.hpp"

using namespace gantry;
using gantry::testing::ChildProcess;
using gantry::testing::run_cli;
using gantry::testing::TempDir;
using gantry::testing::wait_until;

namespace {

const std::string kFfnn = std::string(GANTRY_TEST_DATA) + "/doppler/ffnn_192nodes.txt";

// A coordinator on a free loopback port, and workers joining it.
struct LoopbackCluster {
  TempDir dir;
  std::unique_ptr<ChildProcess> coordinator;
  std::vector<std::unique_ptr<ChildProcess>> workers;
  std::string endpoint;

  LoopbackCluster() { start_coordinator(); }

  std::vector<std::string> client_keys;  // --curve-key ... --coordinator-key ... for client calls

  LoopbackCluster(std::vector<std::string> extra) { start_coordinator("tcp://127.0.0.1:0", std::move(extra)); }

  // On a free port, or on `bind` (a restart on the port the workers know).
  void start_coordinator(const std::string& bind = "tcp://127.0.0.1:0", std::vector<std::string> extra = {}) {
    std::vector<std::string> args{GANTRY_BINARY, "coordinator", "--bind", bind, "--data", dir.file("data")};
    args.insert(args.end(), extra.begin(), extra.end());
    coordinator = std::make_unique<ChildProcess>(args, dir.file("coordinator.log"));
    std::smatch m;
    std::string log;
    const std::regex listening("listening on (tcp://127\\.0\\.0\\.1:[0-9]+)");
    const bool up = wait_until([&] { log = coordinator->log(); return std::regex_search(log, m, listening); }, 60);
    INFO("coordinator log: " << coordinator->log() << "; exit status " << (up ? 0 : coordinator->wait(0.1)));
    REQUIRE(up);
    endpoint = m[1];
  }

  ChildProcess& start_worker(const std::string& name, int slots = 1, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{GANTRY_BINARY, "worker", "--connect", endpoint, "--rollouts", std::to_string(slots), "--name", name};
    args.insert(args.end(), extra.begin(), extra.end());
    workers.push_back(std::make_unique<ChildProcess>(args, dir.file(name + ".log")));
    return *workers.back();
  }

  nlohmann::json status() {
    std::vector<std::string> args{"status", "--coordinator", endpoint, "-f", "json"};
    args.insert(args.end(), client_keys.begin(), client_keys.end());
    auto run = run_cli(args);
    INFO(run.err);
    REQUIRE(run.code == 0);
    return nlohmann::json::parse(run.out);
  }

  const nlohmann::json* worker(const nlohmann::json& status, const std::string& name) {
    for (const auto& w : status["workers"])
      if (w["name"] == name) return &w;
    return nullptr;
  }

  bool slots_are(int slots) { return status()["slots"] == slots; }

  std::string write_job(long evals, long batch_evals, int devices = 4) {
    const std::string path = dir.file("job" + std::to_string(devices) + ".yaml");
    std::ofstream(path) << "graph: " << kFfnn << "\ncluster: identical:" << devices << "\nsim: doppler\nevals: " << evals
                        << "\nbatch-evals: " << batch_evals << "\nseed: 5\n";
    return path;
  }

  // Every job the coordinator lists, oldest first.
  nlohmann::json jobs() {
    auto run = run_cli({"jobs", "--background", "--coordinator", endpoint, "-f", "json"});
    INFO(run.err);
    REQUIRE(run.code == 0);
    nlohmann::json all = nlohmann::json::parse(run.out);
    std::sort(all.begin(), all.end(), [](const nlohmann::json& a, const nlohmann::json& b) { return a["started"] < b["started"]; });
    return all;
  }

  std::string submit(const std::string& job_file) {
    auto run = run_cli({"submit", job_file, "--coordinator", endpoint, "-f", "json"});
    INFO(run.err);
    REQUIRE(run.code == 0);
    return nlohmann::json::parse(run.out)["job"];
  }

  JobRecord job(const std::string& id) {
    auto store = Store::open_read_only(dir.file("data")).value();
    return *store->job(id).value();
  }

  // The job's stored record has a final state. (After a restart, `ended` also holds while the
  // job shows INTERRUPTED, before the restarted coordinator queues it again.)
  bool finished(const std::string& id) { return is_final(job(id).state); }

  bool ended(const std::string& id) {
    auto run = run_cli({"jobs", id, "--coordinator", endpoint, "-f", "json"});
    if (run.code != 0) return false;
    const std::string state = nlohmann::json::parse(run.out)[0]["state"];
    return state != "RUNNING" && state != "QUEUED";
  }
};

struct Expected {
  Graph graph = read_graph_file(kFfnn).value();
  gantry::Cluster cluster = gantry::Cluster::identical(4).value();
  CostTable costs{graph, cluster};
  SimOptions sim = [] {
    SimOptions o;
    o.doppler = true;
    return o;
  }();
  PlacementProblem problem() const { return PlacementProblem{graph, cluster, costs, sim}; }
  // The heuristics' share of an evaluation budget (they run first, as a task on a worker).
  long heuristic_evaluations(long budget) const {
    SearchBudget b;
    b.seed = 5;
    b.seconds = 0;
    b.evaluations = budget;
    return best_heuristic(problem(), b).evaluations;
  }
};

// Evaluations of a job's episode 0: its heuristics.
long heuristics_episode(Store& store, const std::string& job) {
  const std::vector<EpisodeRecord> episodes = store.episodes(job).value();
  for (const EpisodeRecord& e : episodes)
    if (e.sequence == 0) return e.candidates;
  return -1;
}

long episode_evaluations(Store& store, const std::string& job) {
  const std::vector<EpisodeRecord> episodes = store.episodes(job).value();
  return std::accumulate(episodes.begin(), episodes.end(), 0L, [](long s, const EpisodeRecord& e) { return s + e.candidates; });
}

}  // namespace

TEST_CASE("a coordinator and 2 worker processes run a job: evaluations exact, the stored best is the best episode", "[cluster]") {
  LoopbackCluster c;
  c.start_worker("w1");
  c.start_worker("w2");
  REQUIRE(wait_until([&] { return c.slots_are(2); }, 20));
  const long budget = 20000;
  const std::string id = c.submit(c.write_job(budget, 250));
  REQUIRE(wait_until([&] { return c.ended(id); }, 60));
  const JobRecord job = c.job(id);
  CHECK(job.state == JobState::complete);
  CHECK(job.evaluations == budget);
  Expected e;
  auto store = Store::open_read_only(c.dir.file("data")).value();
  CHECK(episode_evaluations(*store, id) == budget);
  CHECK(heuristics_episode(*store, id) == e.heuristic_evaluations(budget));
  // Both workers ran batches.
  const auto status = c.status();
  CHECK((*c.worker(status, "w1"))["done"].get<long>() > 0);
  CHECK((*c.worker(status, "w2"))["done"].get<long>() > 0);
  // The stored best is the best of the heuristics and the episodes, and simulates to its makespan.
  auto best = store->best(fingerprint(e.graph), runtime_fingerprint(e.cluster, e.sim)).value();
  REQUIRE(best.has_value());
  double best_episode = std::numeric_limits<double>::infinity();
  const std::vector<EpisodeRecord> episodes = store->episodes(id).value();
  for (const EpisodeRecord& ep : episodes) best_episode = std::min(best_episode, ep.best_makespan);
  SearchBudget b;
  b.seed = 5;
  b.seconds = 0;
  b.evaluations = budget;
  const double heuristic = best_heuristic(e.problem(), b).makespan;
  CHECK(best->makespan == std::min(heuristic, best_episode));
  CHECK(best->makespan == Simulator(e.graph, e.costs, e.cluster, e.sim).makespan(best->placement));
  CHECK(job.best_makespan == best->makespan);
  // Anyone can ask the coordinator for it.
  const auto query = run_cli({"query", "best", "--coordinator", c.endpoint, "--graph", kFfnn, "--cluster", "identical:4",
                              "--sim", "doppler", "-f", "json"});
  INFO(query.err);
  REQUIRE(query.code == 0);
  const auto answer = nlohmann::json::parse(query.out);
  CHECK(answer["makespan"].get<double>() == best->makespan);
  CHECK(answer["placement"].get<std::vector<int>>() == std::vector<int>(best->placement.device.begin(), best->placement.device.end()));
  const auto missing = run_cli({"query", "best", "--coordinator", c.endpoint, "--graph", kFfnn, "--cluster", "identical:3",
                                "--sim", "doppler"});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains("no stored placement"));
  CHECK_THAT(missing.err, Catch::Contains("at the coordinator"));
  // The other query verbs answer from the coordinator's store what the store itself holds.
  const auto list = run_cli({"query", "list", "--coordinator", c.endpoint, "-f", "json"});
  INFO(list.err);
  REQUIRE(list.code == 0);
  const auto listed = nlohmann::json::parse(list.out);
  REQUIRE(listed.size() == store->list_best().value().size());
  REQUIRE(listed.size() == 1);  // one graph tuned on one runtime
  CHECK(listed[0]["makespan"].get<double>() == best->makespan);
  CHECK(listed[0]["graph_fingerprint"] == fingerprint(e.graph).hex());
  const std::string key = best->graph.hex().substr(0, 8) + ":" + best->cluster.hex().substr(0, 8);  // as `list` prints it
  const auto history = run_cli({"query", "history", "--coordinator", c.endpoint, "--fingerprint", key, "-f", "json"});
  INFO(history.err);
  REQUIRE(history.code == 0);
  const auto improvements = nlohmann::json::parse(history.out);
  const auto stored_history = store->history(best->graph, best->cluster).value();
  REQUIRE(improvements.size() == stored_history.size());
  CHECK(improvements.back()["makespan"].get<double>() == stored_history.back().makespan);
  CHECK(improvements.back()["makespan"].get<double>() == best->makespan);  // the last improvement is the best
  const auto exported = run_cli({"query", "export", "--coordinator", c.endpoint, "--fingerprint", key});
  INFO(exported.err);
  REQUIRE(exported.code == 0);
  CHECK(nlohmann::json::parse(exported.out)["placement"].get<std::vector<int>>() ==
        std::vector<int>(best->placement.device.begin(), best->placement.device.end()));
}

TEST_CASE("a worker killed mid-job loses nothing; a worker joining mid-job gets work", "[cluster]") {
  LoopbackCluster c;
  ChildProcess& doomed = c.start_worker("w1");
  c.start_worker("w2");
  REQUIRE(wait_until([&] { return c.slots_are(2); }, 20));
  const long budget = 300000;
  const std::string id = c.submit(c.write_job(budget, 500));
  REQUIRE(wait_until([&] { return c.status()["committed"].get<long>() >= 20; }, 60));
  doomed.signal(SIGKILL);
  REQUIRE(doomed.wait(10) == 128 + SIGKILL);
  c.start_worker("w3");
  REQUIRE(wait_until([&] { return c.ended(id); }, 120));
  const JobRecord job = c.job(id);
  CHECK(job.state == JobState::complete);
  CHECK(job.evaluations == budget);
  Expected e;
  auto store = Store::open_read_only(c.dir.file("data")).value();
  CHECK(episode_evaluations(*store, id) == budget);
  CHECK(heuristics_episode(*store, id) == e.heuristic_evaluations(budget));
  const auto status = c.status();
  INFO(status.dump());
  CHECK(c.worker(status, "w1") == nullptr);  // gone: 3 heartbeats missed
  REQUIRE(c.worker(status, "w3") != nullptr);
  CHECK((*c.worker(status, "w3"))["done"].get<long>() > 0);
}

TEST_CASE("a coordinator killed mid-job and restarted on its data resumes the job; nothing is lost or counted twice", "[cluster]") {
  LoopbackCluster c;
  c.start_worker("w1", 2);
  REQUIRE(wait_until([&] { return c.slots_are(2); }, 20));
  const long budget = 300000;
  const std::string id = c.submit(c.write_job(budget, 500));
  REQUIRE(wait_until([&] { return c.status()["committed"].get<long>() >= 20; }, 60));
  c.coordinator->signal(SIGKILL);
  REQUIRE(c.coordinator->wait(10) == 128 + SIGKILL);
  Expected e;
  double best_before = 0;
  {
    auto store = Store::open_read_only(c.dir.file("data")).value();
    auto best = store->best(fingerprint(e.graph), runtime_fingerprint(e.cluster, e.sim)).value();
    REQUIRE(best.has_value());
    best_before = best->makespan;
    CHECK(store->job(id).value()->state == JobState::interrupted);  // its coordinator is gone
  }
  c.start_coordinator(c.endpoint);  // same data, same port: the worker reconnects by itself
  REQUIRE(wait_until([&] { return c.finished(id); }, 120));
  const JobRecord job = c.job(id);
  INFO(c.coordinator->log());
  CHECK(job.state == JobState::complete);
  CHECK(job.evaluations == budget);
  auto store = Store::open_read_only(c.dir.file("data")).value();
  CHECK(episode_evaluations(*store, id) == budget);
  auto best = store->best(fingerprint(e.graph), runtime_fingerprint(e.cluster, e.sim)).value();
  REQUIRE(best.has_value());
  CHECK(best->makespan <= best_before);  // the stored best survived and only improved
  CHECK(best->makespan == Simulator(e.graph, e.costs, e.cluster, e.sim).makespan(best->placement));
  CHECK_THAT(c.coordinator->log(), Catch::Contains("job " + id + " resumed"));
}

TEST_CASE("with CURVE, only authorized keys can take work, submit or ask", "[cluster]") {
  TempDir keys;
  for (const char* who : {"coordinator", "good", "bad"})
    REQUIRE(run_cli({"keys", "generate", who, "--dir", keys.path()}).code == 0);
  std::ofstream(keys.file("authorized_keys")) << "# the only key allowed in\n"
                                             << gantry::testing::read_text(keys.file("good.pub")).substr(
                                                    gantry::testing::read_text(keys.file("good.pub")).find("public-key:"));
  LoopbackCluster c({"--curve-key", keys.file("coordinator.key"), "--authorized-keys", keys.file("authorized_keys")});
  const std::vector<std::string> good{"--curve-key", keys.file("good.key"), "--coordinator-key", keys.file("coordinator.pub")};
  const std::vector<std::string> bad{"--curve-key", keys.file("bad.key"), "--coordinator-key", keys.file("coordinator.pub")};
  c.client_keys = good;
  c.start_worker("good", 1, good);
  c.start_worker("bad", 1, bad);
  c.start_worker("plain", 1);
  REQUIRE(wait_until([&] { return c.slots_are(1); }, 20));
  REQUIRE(wait_until([&] { return c.status()["refused"].get<long>() >= 1; }, 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // time enough for the others to join, were they let in
  const auto status = c.status();
  INFO(status.dump());
  REQUIRE(status["workers"].size() == 1);
  CHECK(status["workers"][0]["name"] == "good");
  const std::string job = c.write_job(2000, 250);
  for (const auto& keys_used : {bad, std::vector<std::string>{}}) {
    for (std::vector<std::string> args : {std::vector<std::string>{"status"}, {"submit", job}, {"jobs", "x"}, {"cancel", "x"}}) {
      args.insert(args.end(), {"--coordinator", c.endpoint, "--timeout", "0.5"});
      args.insert(args.end(), keys_used.begin(), keys_used.end());
      const auto run = run_cli(args);
      INFO(args[0] << ": " << run.err);
      CHECK(run.code == 1);
      CHECK_THAT(run.err, Catch::Contains("no answer from the coordinator"));
    }
  }
  // The authorized client is served, and its job runs on the authorized worker.
  std::vector<std::string> submit{"submit", job, "--coordinator", c.endpoint, "--wait", "-f", "json"};
  submit.insert(submit.end(), good.begin(), good.end());
  const auto run = run_cli(submit);
  INFO("stdout: " << run.out << "\nstderr: " << run.err << "\ncoordinator: " << c.coordinator->log());
  CHECK(run.code == 0);
  CHECK(nlohmann::json::parse(run.out)[0]["evaluations"] == 2000);
}

TEST_CASE("a stream of garbage frames is survived and counted; a missing job is an error reply", "[cluster]") {
  LoopbackCluster c;
  c.start_worker("w1");
  REQUIRE(wait_until([&] { return c.slots_are(1); }, 20));
  zmq::context_t context{1};
  zmq::socket_t junk(context, zmq::socket_type::dealer);
  junk.set(zmq::sockopt::linger, 0);
  junk.connect(c.endpoint);
  std::mt19937_64 rng(9);
  const auto bytes = [&](std::size_t n) {
    std::string out(n, '\0');
    for (char& ch : out) ch = static_cast<char>(rng());
    return out;
  };
  const std::string version(1, static_cast<char>(wire::kProtocolVersion));
  long sent = 0;
  for (int round = 0; round < 200; ++round) {
    const std::vector<std::vector<std::string>> messages = {
        {bytes(5)},                                                         // one frame
        {std::string(1, '\x09'), std::string(1, '\x01'), bytes(10)},        // a future protocol version
        {version, std::string(1, '\xc8'), bytes(10)},                        // an unknown type
        {version, std::string(1, static_cast<char>(wire::Type::submit)), bytes(64)},  // payload noise
        {version, std::string(1, static_cast<char>(wire::Type::done)), wire::encode(wire::Done{}).substr(0, 7)},  // truncated
        {version, std::string(1, static_cast<char>(wire::Type::hello)), bytes(3), bytes(3)},  // a frame too many
        {version, std::string(1, static_cast<char>(wire::Type::reply)), wire::encode(wire::Reply{})},  // not for a coordinator
    };
    for (const auto& frames : messages) {
      std::vector<zmq::const_buffer> buffers;
      for (const auto& f : frames) buffers.push_back(zmq::buffer(f));
      zmq::send_multipart(junk, buffers);
      ++sent;
    }
  }
  // Every message was dropped and counted, and the coordinator still serves workers and clients.
  REQUIRE(wait_until([&] { return c.status()["malformed"].get<long>() >= sent; }, 30));
  CHECK(c.status()["malformed"].get<long>() == sent);
  const auto missing = run_cli({"jobs", "no-such-job", "--coordinator", c.endpoint});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains("no job no-such-job"));
  const auto cancel = run_cli({"cancel", "no-such-job", "--coordinator", c.endpoint});
  CHECK(cancel.code == 1);
  CHECK_THAT(cancel.err, Catch::Contains("no job no-such-job"));
  const std::string id = c.submit(c.write_job(2000, 250));
  REQUIRE(wait_until([&] { return c.ended(id); }, 60));
  CHECK(c.job(id).state == JobState::complete);
}

TEST_CASE("names and paths that are not UTF-8 do not stop the coordinator", "[cluster]") {
  // JSON text (status, job records) cannot hold such bytes: nlohmann throws on them, which ended
  // the coordinator actor while its process stayed up, answering nothing. They become U+FFFD.
  LoopbackCluster c;
  const std::string latin1_worker = "w\xe9";
  c.start_worker(latin1_worker);
  REQUIRE(wait_until([&] { return c.slots_are(1); }, 20));
  CHECK(c.worker(c.status(), "w\xef\xbf\xbd") != nullptr);
  const std::string graph = c.dir.file("g\xe9.txt");
  std::ofstream(graph) << std::ifstream(kFfnn).rdbuf();
  const auto tuned = run_cli({"tune", "--coordinator", c.endpoint, "--graph", graph, "--cluster", "identical:4",
                              "--sim", "doppler", "--evals", "2000", "--seed", "5"});
  INFO(tuned.err);
  CHECK(tuned.code == 0);
  CHECK(c.status()["slots"] == 1);  // still answering
  const auto jobs = run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"});
  REQUIRE(jobs.code == 0);
  CHECK(nlohmann::json::parse(jobs.out).size() == 1);
}

TEST_CASE("a client that never reads its replies cannot stall the workers", "[cluster]") {
  LoopbackCluster c({"--peer-queue", "100"});
  c.start_worker("w1");
  REQUIRE(wait_until([&] { return c.slots_are(1); }, 20));
  // A client asks for the status 20,000 times and reads nothing: its replies (about a kilobyte
  // each) fill the kernel's buffers, then its queue of 100 at the coordinator, then are dropped.
  zmq::context_t context{1};
  zmq::socket_t slow(context, zmq::socket_type::dealer);
  slow.set(zmq::sockopt::linger, 0);
  slow.set(zmq::sockopt::rcvhwm, 1);
  slow.set(zmq::sockopt::sndhwm, 0);
  slow.set(zmq::sockopt::rcvbuf, 4096);
  slow.connect(c.endpoint);
  const std::string version(1, static_cast<char>(wire::kProtocolVersion));
  const std::string type(1, static_cast<char>(wire::Type::status));
  const std::string payload = wire::encode(wire::Request{});
  int sent = 0;
  for (int i = 0; i < 20000; ++i) {
    std::array<zmq::const_buffer, 3> frames{zmq::buffer(version), zmq::buffer(type), zmq::buffer(payload)};
    if (zmq::send_multipart(slow, frames)) ++sent;
  }
  REQUIRE(sent == 20000);
  REQUIRE(wait_until([&] { return c.status()["dropped_sends"].get<long>() > 0; }, 60));
  // Meanwhile the worker takes work and a job completes with every evaluation it asked for.
  const long budget = 4000;
  const std::string id = c.submit(c.write_job(budget, 250));
  REQUIRE(wait_until([&] { return c.ended(id); }, 60));
  const JobRecord job = c.job(id);
  CHECK(job.state == JobState::complete);
  CHECK(job.evaluations == budget);
}

TEST_CASE("train --coordinator runs a learner job on the worker processes; the coordinator's store keeps its policy", "[cluster]") {
  LoopbackCluster c;
  c.start_worker("w1");
  c.start_worker("w2");
  REQUIRE(wait_until([&] { return c.slots_are(2); }, 20));
  const std::vector<std::string> problem = {"--workload", "ffnn:costs=doppler,layers=2", "--cluster", "identical:4", "--sim", "doppler"};
  auto train = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"train", "--coordinator", c.endpoint, "--episodes", "96", "--batch", "8", "--hidden", "8",
                                  "--head", "8", "--state", "4", "--steps", "1"};
    args.insert(args.end(), problem.begin(), problem.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  // --save and --curve fetch the policy and its learning curve from the coordinator's store.
  const std::string saved = c.dir.file("remote.policy"), curve = c.dir.file("remote.csv");
  const auto first = train({"--name", "remote", "--save", saved, "--curve", curve});
  INFO(first.err);
  REQUIRE(first.code == 0);

  // The job is the coordinator's: its record, its batch summaries and its policy are in its store.
  const auto jobs = nlohmann::json::parse(run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"}).out);
  REQUIRE(jobs.size() == 1);
  const std::string id = jobs[0]["id"];
  CHECK(jobs[0]["state"] == "COMPLETE");
  CHECK(jobs[0]["kind"] == "train");
  CHECK_THAT(jobs[0]["message"].get<std::string>(), Catch::Contains("policy remote:1 stored"));
  {
    auto store = Store::open_read_only(c.dir.file("data")).value();
    CHECK(episode_evaluations(*store, id) >= 96);  // episodes, one summary per batch
    const auto policy = store->policy("remote").value();
    REQUIRE(policy.has_value());
    CHECK(policy->episodes >= 96);
    CHECK(policy->job == id);
    CHECK(gantry::testing::read_text(saved) == policy->weights);
    const std::string csv = gantry::testing::read_text(curve);
    CHECK(csv == policy->curve);
    CHECK(std::count(csv.begin(), csv.end(), '\n') >= 2);  // the header and a point per 80 episodes (10 updates of 8)
  }
  // Anyone can read it back by job or by name, as JSON or into files.
  const auto by_job = run_cli({"query", "policy", "--coordinator", c.endpoint, "--job", id, "-f", "json"});
  INFO(by_job.err);
  REQUIRE(by_job.code == 0);
  const auto record = nlohmann::json::parse(by_job.out);
  CHECK((record["name"] == "remote" && record["version"] == 1 && record["job"] == id));
  const std::string csv = gantry::testing::read_text(curve);
  CHECK(record["curve"].size() + 1 == static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')));
  const std::string svg = c.dir.file("remote.svg");
  const auto by_name = run_cli({"query", "policy", "remote:1", "--coordinator", c.endpoint, "--curve", svg});
  INFO(by_name.err);
  REQUIRE(by_name.code == 0);
  CHECK_THAT(by_name.out, Catch::Contains("policy   remote:1") && Catch::Contains("by job " + id));
  CHECK_THAT(gantry::testing::read_text(svg), Catch::StartsWith("<svg"));
  const auto nosuch = run_cli({"query", "policy", "remote:9", "--coordinator", c.endpoint});
  CHECK(nosuch.code != 0);
  CHECK_THAT(nosuch.err, Catch::Contains("remote:9 is not stored"));
  // Both workers generated episodes.
  const auto status = c.status();
  CHECK((*c.worker(status, "w1"))["done"].get<long>() > 0);
  CHECK((*c.worker(status, "w2"))["done"].get<long>() > 0);
  // Anyone can list the coordinator's policies, and start from one of them by name.
  const auto second = train({"--name", "remote", "--init", "remote", "--stage", "sim"});
  INFO(second.err);
  REQUIRE(second.code == 0);
  const auto listed = run_cli({"query", "policies", "--coordinator", c.endpoint, "-f", "json"});
  INFO(listed.err);
  REQUIRE(listed.code == 0);
  const auto policies = nlohmann::json::parse(listed.out);
  REQUIRE(policies.size() == 2);
  CHECK((policies[0]["version"] == 1 && policies[1]["version"] == 2));
  CHECK(policies[1]["parent"] == "remote:1");
  CHECK(policies[1]["stage"] == "sim");
  // The best placement went to the coordinator's store as method doppler, as `tune` stores its own.
  const auto best = run_cli({"query", "best", "--coordinator", c.endpoint, "--workload", "ffnn:costs=doppler,layers=2",
                             "--cluster", "identical:4", "--sim", "doppler", "-f", "json"});
  INFO(best.err);
  REQUIRE(best.code == 0);
  CHECK(nlohmann::json::parse(best.out)["method"] == "doppler");
  // A stored policy that is not there fails the job, and says so.
  const auto missing = train({"--init", "nosuch"});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains("policy 'nosuch' is not in the store"));
}

TEST_CASE("a coordinator killed or stopped mid-training and restarted goes on from the learner job's checkpoint", "[cluster]") {
  // Killed, the learner dies with it; stopped (SIGTERM), the learner fails as the pool and store go.
  const int sig = GENERATE(SIGKILL, SIGTERM);
  INFO("signal " << sig);
  LoopbackCluster c;
  c.start_worker("w1", 2);
  REQUIRE(wait_until([&] { return c.slots_are(2); }, 20));
  // Followed by a client that fails when the coordinator dies; the job is the coordinator's.
  ChildProcess client({GANTRY_BINARY, "train", "--coordinator", c.endpoint, "--episodes", "4000", "--batch", "8", "--hidden",
                       "8", "--head", "8", "--state", "4", "--steps", "1", "--workload", "ffnn:costs=doppler,layers=2",
                       "--cluster", "identical:4", "--sim", "doppler", "--name", "resumed"},
                      c.dir.file("client.log"));
  std::string id;
  REQUIRE(wait_until([&] {
    const auto run = run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"});
    if (run.code != 0) return false;
    const auto jobs = nlohmann::json::parse(run.out);
    if (jobs.empty()) return false;
    id = jobs[0]["id"];
    return true;
  }, 30));
  // Imitation (800 episodes) ends with a checkpoint of stage 2 (reinforce, 3200 episodes to go).
  REQUIRE(wait_until([&] {
    auto store = Store::open_read_only(c.dir.file("data"));
    if (!store) return false;
    auto bytes = store.value()->checkpoint(id).value();
    return bytes && decode_checkpoint(*bytes).value().stage >= 1;
  }, 120));
  c.coordinator->signal(sig);
  REQUIRE(c.coordinator->wait(20) >= 0);
  c.start_coordinator(c.endpoint);
  REQUIRE(wait_until([&] { return c.finished(id); }, 180));
  INFO(c.coordinator->log());
  INFO("jobs: " << run_cli({"jobs", id, "--coordinator", c.endpoint, "-f", "json"}).out);
  INFO("client: " << client.log());
  CHECK(c.job(id).state == JobState::complete);
  CHECK_THAT(c.coordinator->log(), Catch::Contains("job " + id + ": resumed from its checkpoint (stage 2 of 2"));
  auto store = Store::open_read_only(c.dir.file("data")).value();
  CHECK_FALSE(store->checkpoint(id).value().has_value());  // dropped when the job ended
  const auto policy = store->policy("resumed").value();
  REQUIRE(policy.has_value());
  CHECK(policy->episodes >= 4000);
}

TEST_CASE("a learner job with no worker to serve it can be cancelled or ends with its budget; it stores nothing", "[cluster]") {
  LoopbackCluster c;  // no workers
  const std::string path = c.dir.file("train.log");
  ChildProcess client({GANTRY_BINARY, "train", "--coordinator", c.endpoint, "--workload", "ffnn:costs=doppler,layers=2",
                       "--cluster", "identical:4", "--sim", "doppler", "--budget", "10m", "--name", "idle"},
                      path);
  std::string id;
  REQUIRE(wait_until([&] {
    auto run = run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"});
    if (run.code != 0) return false;
    const auto jobs = nlohmann::json::parse(run.out);
    if (jobs.size() != 1 || jobs[0]["state"] != "RUNNING") return false;
    id = jobs[0]["id"];
    return true;
  }, 30));
  const auto cancelled = run_cli({"cancel", id, "--coordinator", c.endpoint});
  INFO(cancelled.err);
  REQUIRE(cancelled.code == 0);
  REQUIRE(wait_until([&] { return c.ended(id); }, 20));
  CHECK(client.wait(20) == 130);  // the following client ends with the job's status
  const JobRecord job = c.job(id);
  CHECK(job.state == JobState::cancelled);
  CHECK_THAT(job.message, Catch::Contains("no episodes came back"));
  // A time budget ends such a job too: it fails, saying why, instead of waiting for a worker.
  const auto timed = run_cli({"train", "--coordinator", c.endpoint, "--workload", "ffnn:costs=doppler,layers=2", "--cluster",
                              "identical:4", "--sim", "doppler", "--budget", "1s", "--name", "idle"});
  CHECK(timed.code == 1);
  CHECK_THAT(timed.err, Catch::Contains("no episodes came back before the job ended"));
  auto store = Store::open_read_only(c.dir.file("data")).value();
  CHECK(store->policies().value().empty());
}

// A coordinator that improves in the background (runs of `improve`, after 1 s idle) with one worker slot.
struct ImprovingCluster : LoopbackCluster {
  explicit ImprovingCluster(const std::string& improve, std::vector<std::string> extra = {})
      : LoopbackCluster(with(std::move(extra), {"--improve", improve, "--improve-after", "1s"})) {
    start_worker("w1");
    REQUIRE(wait_until([&] { return slots_are(1); }, 20));
  }
  static std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  // Submits the job file and waits for its end.
  std::string run(const std::string& job_file) {
    const std::string id = submit(job_file);
    REQUIRE(wait_until([&] { return ended(id); }, 60));
    return id;
  }
};

bool is_final_state(const nlohmann::json& job) { return is_final(*parse_job_state(job["state"].get<std::string>())); }

// The coordinator's background runs so far, oldest first.
std::vector<nlohmann::json> background_runs(LoopbackCluster& c) {
  std::vector<nlohmann::json> out;
  for (const auto& j : c.jobs())
    if (!j["improves"].get<std::string>().empty()) out.push_back(j);
  return out;
}

TEST_CASE("an idle coordinator with --improve tunes the stored problems again in turn, least recently tuned first", "[cluster]") {
  ImprovingCluster c("2s");
  // Both at once, so that no background run starts between them (the 4-device job starts first).
  const std::string on4 = c.submit(c.write_job(4000, 250, 4));
  const std::string on3 = c.submit(c.write_job(4000, 250, 3));
  REQUIRE(wait_until([&] { return c.ended(on4) && c.ended(on3); }, 60));
  std::vector<nlohmann::json> runs;
  REQUIRE(wait_until([&] { runs = background_runs(c); return runs.size() >= 3 && is_final_state(runs[2]); }, 60));
  // The 4-device problem was tuned longest ago, then the 3-device one, then the 4-device one again.
  const std::vector<std::string> sources = {on4, on3, on4};
  const std::vector<std::string> clusters = {"identical:4", "identical:3", "identical:4"};
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("background run " << i << ": " << runs[i].dump());
    CHECK(runs[i]["message"].get<std::string>().rfind("background improvement of job " + sources[i], 0) == 0);
    CHECK(runs[i]["cluster"] == clusters[i]);
    CHECK(runs[i]["state"] == "COMPLETE");
    CHECK(runs[i]["evaluations"].get<long>() > 0);
  }
  // `jobs` leaves the ended runs out unless asked, and says so.
  auto listed = run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"});
  REQUIRE(listed.code == 0);
  int clients = 0;
  for (const auto& j : nlohmann::json::parse(listed.out)) {
    INFO(j.dump());
    CHECK((j["improves"].get<std::string>().empty() || !is_final_state(j)));
    clients += j["improves"].get<std::string>().empty();
  }
  CHECK(clients == 2);
  CHECK_THAT(run_cli({"jobs", "--coordinator", c.endpoint}).out, Catch::Contains("background improvement runs: --background lists them"));
  // Background runs store no batch summaries (nothing resumes them); the submitted jobs do.
  {
    auto store = Store::open_read_only(c.dir.file("data")).value();
    CHECK_FALSE(store->episodes(on4).value().empty());
    for (const auto& run : runs) CHECK(store->episodes(run["id"].get<std::string>()).value().empty());
  }
  // Each run searched on from the best stored before it: none ends above its problem's first job.
  CHECK(runs[0]["best_makespan"].get<double>() <= c.job(on4).best_makespan);
  CHECK(runs[2]["best_makespan"].get<double>() <= runs[0]["best_makespan"].get<double>());
}

TEST_CASE("background improvement gets past many stored jobs that have no spec to run again", "[cluster]") {
  LoopbackCluster c;  // not improving yet: no background run before the restart
  c.start_worker("w1");
  REQUIRE(wait_until([&] { return c.slots_are(1); }, 20));
  const std::string submitted = c.submit(c.write_job(2000, 250, 4));
  REQUIRE(wait_until([&] { return c.ended(submitted); }, 60));
  // Stop the coordinator and store, tuned longer ago than that job, 30 jobs run in their own
  // process (`gantry tune` keeps no spec): more than one attempt looks at.
  c.coordinator->signal(SIGTERM);
  REQUIRE(c.coordinator->wait(20) == 0);
  {
    auto store = Store::open(c.dir.file("data")).value();
    for (int i = 0; i < 30; ++i) {
      JobRecord local;
      local.id = "local-" + std::to_string(i);
      local.state = JobState::complete;
      local.graph.hi = static_cast<std::uint64_t>(i) + 1;
      local.started = 1000 + i;
      REQUIRE(store->put_job(local));
    }
  }
  c.start_coordinator(c.endpoint, {"--improve", "2s", "--improve-after", "1s"});
  std::vector<nlohmann::json> runs;
  REQUIRE(wait_until([&] { runs = background_runs(c); return !runs.empty(); }, 60));
  CHECK(runs[0]["improves"] == submitted);
}

TEST_CASE("background improvement leaves out problems whose stored best is at their lower bound", "[cluster]") {
  ImprovingCluster c("2s");
  // A chain: its critical path is the lower bound, and any placement meets it.
  const std::string chain = c.dir.file("chain.json");
  std::ofstream(chain) << R"({"format": "gantry-graph", "version": 1, "ops": [{"id": 0, "cost": 1}, {"id": 1, "cost": 2},)"
                       << R"( {"id": 2, "cost": 3}], "edges": [[0, 1], [1, 2]]})";
  const std::string chain_job = c.dir.file("chain.yaml");
  std::ofstream(chain_job) << "graph: " << chain << "\ncluster: identical:2\nevals: 200\nbatch-evals: 50\nseed: 5\n";
  const std::string at_bound = c.submit(chain_job);  // submitted first: the least recently tuned
  const std::string ffnn = c.submit(c.write_job(2000, 250, 4));
  REQUIRE(wait_until([&] { return c.ended(at_bound) && c.ended(ffnn); }, 60));
  REQUIRE(c.job(at_bound).best_makespan == Approx(6));
  std::vector<nlohmann::json> runs;
  REQUIRE(wait_until([&] { runs = background_runs(c); return runs.size() >= 2; }, 60));
  for (const auto& run : runs) CHECK(run["improves"] == ffnn);
}

TEST_CASE("the store keeps the newest --improve-keep background runs of a problem and drops the older", "[cluster]") {
  ImprovingCluster c("1s", {"--improve-keep", "2"});
  const std::string first = c.run(c.write_job(2000, 250, 4));
  std::vector<std::string> seen;  // every background run listed at some point, in order of start
  REQUIRE(wait_until([&] {
    for (const auto& run : background_runs(c))
      if (std::find(seen.begin(), seen.end(), run["id"]) == seen.end()) seen.push_back(run["id"]);
    return seen.size() >= 5;
  }, 90));
  // Once the fifth has started, the fourth and third have ended: the first two are gone.
  REQUIRE(wait_until([&] {
    auto store = Store::open_read_only(c.dir.file("data")).value();
    return !store->job(seen[0]).value().has_value() && !store->job(seen[1]).value().has_value();
  }, 20));
  auto store = Store::open_read_only(c.dir.file("data")).value();
  CHECK(store->job(seen[3]).value().has_value());
  CHECK(store->job(first).value().has_value());  // the submitted job is not a background run
  std::size_t ended = 0;
  const std::vector<JobRecord> jobs = store->jobs().value();  // kept: a range over value() of a temporary dangles
  for (const JobRecord& r : jobs) ended += !r.improves.empty() && is_final(r.state);
  CHECK(ended <= 2);
}

TEST_CASE("background runs start at most once per --improve duration, also when each ends at once", "[cluster]") {
  ImprovingCluster c("8s");
  // A small pipeline tune converges in about a second, well inside its 8 s.
  const std::string job = c.dir.file("pipeline.yaml");
  std::ofstream(job) << "kind: pipeline\nmodel: llama-3-8b\ncluster: 8xH100-nvswitch\npp: 4\nmicrobatches: 8\nbudget: 4s\n";
  c.run(job);
  std::vector<nlohmann::json> runs;
  REQUIRE(wait_until([&] { runs = background_runs(c); return runs.size() >= 2; }, 60));
  INFO(runs[0].dump() << "\n" << runs[1].dump());
  CHECK(runs[0]["finished"].get<double>() - runs[0]["started"].get<double>() < 6);  // it ended early
  CHECK(runs[1]["started"].get<double>() - runs[0]["started"].get<double>() >= 8.0 - 0.01);
}

TEST_CASE("a job submitted while the coordinator improves in the background stops that run and runs in full", "[cluster]") {
  ImprovingCluster c("10m");
  const std::string first = c.run(c.write_job(4000, 250, 4));
  std::vector<nlohmann::json> runs;
  REQUIRE(wait_until([&] { runs = background_runs(c); return !runs.empty() && runs[0]["state"] == "RUNNING"; }, 30));
  const nlohmann::json status = c.status();  // says what runs in the background
  CHECK(status["improve_seconds"] == 600.0);
  CHECK(status["background_run"] == runs[0]["id"]);
  const std::string second = c.submit(c.write_job(3000, 250, 3));
  REQUIRE(wait_until([&] { return c.ended(second); }, 60));
  const JobRecord done = c.job(second);
  CHECK(done.state == JobState::complete);
  CHECK(done.evaluations == 3000);
  REQUIRE(wait_until([&] { runs = background_runs(c); return !runs.empty() && is_final_state(runs[0]); }, 20));
  INFO(runs[0].dump());
  CHECK(runs[0]["state"] == "CANCELLED");
  CHECK(runs[0]["message"].get<std::string>().rfind("background improvement of job " + first, 0) == 0);
}

TEST_CASE("jobs shows a running job's live evaluations and best, which its stored record gets only at the end", "[cluster]") {
  LoopbackCluster c;
  c.start_worker("w1");
  REQUIRE(wait_until([&] { return c.slots_are(1); }, 20));
  const std::string id = c.submit(c.write_job(1000000000, 250));  // far more than the test waits for
  nlohmann::json live;
  REQUIRE(wait_until([&] {
    auto run = run_cli({"jobs", id, "--coordinator", c.endpoint, "-f", "json"});
    if (run.code != 0) return false;
    live = nlohmann::json::parse(run.out)[0];
    return live["state"] == "RUNNING" && live["evaluations"].get<long>() > 0 && live["best_makespan"].get<double>() > 0;
  }, 30));
  // The store's record of the running job still has none (it is written when the job ends).
  CHECK(c.job(id).evaluations == 0);
  REQUIRE(run_cli({"cancel", id, "--coordinator", c.endpoint}).code == 0);
  REQUIRE(wait_until([&] { return c.ended(id); }, 20));
  const JobRecord ended = c.job(id);
  CHECK(ended.evaluations >= live["evaluations"].get<long>());
  CHECK(ended.best_makespan <= live["best_makespan"].get<double>());
}

TEST_CASE("pipeline tune --coordinator runs a pipeline job on the worker processes; the coordinator's store keeps the scheme",
          "[cluster]") {
  LoopbackCluster c;
  c.start_worker("w1");
  c.start_worker("w2");
  REQUIRE(wait_until([&] { return c.slots_are(2); }, 20));
  // 32 microbatches: steps of 43 moves or more are large enough to go to the workers.
  const std::vector<std::string> problem = {"--model", "llama-3-8b", "--cluster", "8xH100-nvswitch", "--pp", "4",
                                            "--microbatches", "32"};
  auto tune = [&](std::vector<std::string> head) {
    head.insert(head.end(), problem.begin(), problem.end());
    head.insert(head.end(), {"--max-chunks", "2", "-f", "json"});
    return run_cli(head);
  };
  const auto remote = tune({"pipeline", "tune", "--coordinator", c.endpoint});
  INFO(remote.err);
  REQUIRE(remote.code == 0);
  const auto r = nlohmann::json::parse(remote.out);
  CHECK(r["stored"] == true);
  // The same tuning in one process (its own embedded worker) finds the same scheme: the choice of
  // moves does not depend on where they were evaluated.
  const auto local = tune({"pipeline", "tune", "--no-store", "--rollouts", "1"});
  INFO(local.err);
  REQUIRE(local.code == 0);
  const auto l = nlohmann::json::parse(local.out);
  CHECK(r["tuned"]["iteration_time"] == l["tuned"]["iteration_time"]);
  CHECK(r["tuned"]["scheme"] == l["tuned"]["scheme"]);
  CHECK(r["evaluations"] == l["evaluations"]);
  // Both workers evaluated moves.
  const auto status = c.status();
  CHECK((*c.worker(status, "w1"))["done"].get<long>() > 0);
  CHECK((*c.worker(status, "w2"))["done"].get<long>() > 0);
  // The job is the coordinator's, and so is the scheme: anyone can query it with the same flags.
  const auto jobs = nlohmann::json::parse(run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"}).out);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0]["state"] == "COMPLETE");
  CHECK(jobs[0]["kind"] == "pipeline");
  std::vector<std::string> query{"query", "best", "--coordinator", c.endpoint, "-f", "json"};
  query.insert(query.end(), problem.begin(), problem.end());
  const auto best = run_cli(query);
  INFO(best.err);
  REQUIRE(best.code == 0);
  const auto b = nlohmann::json::parse(best.out);
  CHECK(b["method"] == "pipeline-tune");
  CHECK(b["iteration_time"] == r["tuned"]["iteration_time"]);
  CHECK(b["job"] == jobs[0]["id"]);
  // Detached: the job id comes back at once, the job runs on (and resumes from the stored scheme).
  const auto detached = tune({"pipeline", "tune", "--coordinator", c.endpoint, "--detach"});
  INFO(detached.err);
  REQUIRE(detached.code == 0);
  const std::string id = nlohmann::json::parse(detached.out)["job"];
  CHECK(wait_until([&] {
    const auto listed = nlohmann::json::parse(run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"}).out);
    for (const auto& j : listed)
      if (j["id"] == id) return j["state"] == "COMPLETE";
    return false;
  }, 60));
  // A job file of kind pipeline (its keys are the same flags, paths relative to the file).
  const std::string file = c.dir.file("pipeline.yaml");
  {
    std::ofstream out(file);
    out << "kind: pipeline\nmodel: llama-3-8b\ncluster: 8xH100-nvswitch\npp: 4\nmicrobatches: 32\nmax-chunks: 2\n";
  }
  const auto submitted = run_cli({"submit", file, "--coordinator", c.endpoint, "--wait", "-f", "json"});
  INFO(submitted.err);
  REQUIRE(submitted.code == 0);
  CHECK(nlohmann::json::parse(submitted.out)[0]["kind"] == "pipeline");
  CHECK(nlohmann::json::parse(submitted.out)[0]["best_makespan"] == r["tuned"]["iteration_time"]);
}

TEST_CASE("a pipeline job with no worker to evaluate its moves can be cancelled; its start is stored", "[cluster]") {
  LoopbackCluster c;  // no worker at all: the job's first step waits in the pool
  const std::vector<std::string> problem = {"--model", "llama-3-8b", "--cluster", "8xH100-nvswitch", "--pp", "4",
                                            "--microbatches", "8"};
  std::vector<std::string> submit{"pipeline", "tune", "--coordinator", c.endpoint, "--detach", "-f", "json"};
  submit.insert(submit.end(), problem.begin(), problem.end());
  const auto detached = run_cli(submit);
  INFO(detached.err);
  REQUIRE(detached.code == 0);
  const std::string id = nlohmann::json::parse(detached.out)["job"];
  auto state = [&] {
    const auto listed = nlohmann::json::parse(run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"}).out);
    for (const auto& j : listed)
      if (j["id"] == id) return j["state"].get<std::string>();
    return std::string();
  };
  REQUIRE(wait_until([&] { return state() == "RUNNING"; }, 20));
  const auto cancelled = run_cli({"cancel", id, "--coordinator", c.endpoint});
  INFO(cancelled.err);
  CHECK(cancelled.code == 0);
  CHECK(wait_until([&] { return state() == "CANCELLED"; }, 20));
  std::vector<std::string> query{"query", "best", "--coordinator", c.endpoint, "-f", "json"};
  query.insert(query.end(), problem.begin(), problem.end());
  const auto best = run_cli(query);
  INFO(best.err);
  REQUIRE(best.code == 0);
  CHECK(nlohmann::json::parse(best.out)["job"] == id);
}

TEST_CASE("execute --coordinator and train --stage real measure on the worker with devices; the best keeps its measurement, the profiles learn",
          "[cluster]") {
  LoopbackCluster c;
  c.start_worker("plain");
  c.start_worker("meter", 1, {"--devices", "cpu:2"});
  REQUIRE(wait_until([&] { return c.slots_are(2); }, 20));
  {  // status says which workers are executors
    const auto status = c.status();
    CHECK((*c.worker(status, "meter"))["executors"] == "cpu:2");
    CHECK((*c.worker(status, "plain"))["executors"] == "");
  }
  const std::string workload = "ffnn:layers=2,blocks=2,batch=64,hidden=64";
  const std::vector<std::string> problem = {"--workload", workload, "--cluster", "cpu-2"};
  auto with_problem = [&](std::vector<std::string> args) {
    args.insert(args.end(), problem.begin(), problem.end());
    args.insert(args.end(), {"--coordinator", c.endpoint});
    return run_cli(args);
  };
  const auto tuned = with_problem({"tune", "--evals", "200"});
  INFO(tuned.err);
  REQUIRE(tuned.code == 0);
  const auto measured = with_problem({"execute", "--best", "--repeats", "4", "--warmup", "1", "-f", "json"});
  INFO(measured.err);
  REQUIRE(measured.code == 0);
  const auto job = nlohmann::json::parse(measured.out)[0];
  CHECK(job["kind"] == "measure");
  CHECK(job["state"] == "COMPLETE");
  CHECK(job["evaluations"] == 4);  // timed runs
  const std::string message = job["message"];
  CHECK_THAT(message, Catch::Contains("on worker meter"));  // never on the worker without devices
  CHECK_THAT(message, Catch::Contains("recorded with the stored best"));
  const double median = job["best_makespan"];
  CHECK(median > 0);

  // The coordinator's store: the best carries the measurement, and the profiles hold one sample of
  // every op of the graph (the median run's) and the transfers between the two devices.
  const auto best = nlohmann::json::parse(with_problem({"query", "best", "-f", "json"}).out);
  REQUIRE(best["measured"].is_object());
  CHECK(best["measured"]["median"].get<double>() == Approx(median));
  CHECK(best["measured"]["runs"] == 4);
  const Graph graph = make_workload(workload).value();
  auto store = Store::open_read_only(c.dir.file("data")).value();
  const ProfileTable profiles = store->profiles().value();
  double op_samples = 0;
  for (const ProfileEntry& e : profiles.entries())
    if (e.device_kind.find("->") == std::string::npos) op_samples += e.seconds.count;
  CHECK(op_samples == graph.size());

  // A placement from here measures too, on the worker with devices again.
  const auto single = with_problem({"execute", "--method", "single", "--repeats", "2", "-f", "json"});
  INFO(single.err);
  REQUIRE(single.code == 0);
  const std::string single_message = nlohmann::json::parse(single.out)[0]["message"];
  CHECK_THAT(single_message, Catch::Contains("the submitted placement"));
  CHECK_THAT(single_message, Catch::Contains("on worker meter"));

  // Stage III on the cluster: its episodes are measured on the worker with devices too.
  const auto before = (*c.worker(c.status(), "meter"))["done"].get<long>();
  const auto trained = with_problem({"train", "--stage", "real", "--episodes", "4", "--batch", "2", "--name", "real"});
  INFO(trained.err);
  REQUIRE(trained.code == 0);
  // At least the teacher, 4 episodes and the final greedy placement were measured there (and the
  // best, unless the greedy one is the best: one measurement serves both).
  CHECK((*c.worker(c.status(), "meter"))["done"].get<long>() - before >= 1 + 4 + 1);
  const auto policies = nlohmann::json::parse(run_cli({"query", "policies", "--coordinator", c.endpoint, "-f", "json"}).out);
  REQUIRE(policies.size() == 1);
  CHECK(policies[0]["stage"] == "real");

  // tune --method doppler on the coordinator: its executors attached, stage III follows stages I
  // and II, and the stored best carries a measurement.
  const auto measured_before = (*c.worker(c.status(), "meter"))["done"].get<long>();
  const auto doppler = with_problem({"tune", "--method", "doppler", "--budget", "3s"});
  INFO(doppler.err);
  REQUIRE(doppler.code == 0);
  CHECK((*c.worker(c.status(), "meter"))["done"].get<long>() > measured_before);
  const auto jobs = nlohmann::json::parse(run_cli({"jobs", "--coordinator", c.endpoint, "-f", "json"}).out);
  const nlohmann::json* last = nullptr;  // the doppler job: the train job that started last
  for (const auto& j : jobs)
    if (j["kind"] == "train" && (!last || j["started"].get<double>() > (*last)["started"].get<double>())) last = &j;
  REQUIRE(last);
  CHECK_THAT((*last)["message"].get<std::string>(), Catch::Contains("measured"));  // stage III ran last
  CHECK(c.coordinator->log().find("stage III skipped") == std::string::npos);
}
