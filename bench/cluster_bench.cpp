#include "bench/cluster_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <thread>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "actors/anneal_task.hpp"
#include "actors/net/client.hpp"
#include "actors/place_task.hpp"
#include "actors/problem_spec.hpp"
#include "actors/task_kinds.hpp"
#include "core/child_process.hpp"
#include "actors/tune_job.hpp"
#include "core/graph_io.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "storage/store.hpp"
#include "workloads/workload.hpp"

namespace gantry {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct LocalCluster {
  std::string dir, endpoint;
  std::unique_ptr<ChildProcess> coordinator;
  std::vector<std::unique_ptr<ChildProcess>> workers;

  LocalCluster(const ClusterBenchOptions& o, int max_jobs = 4) {
    char tmpl[] = "/tmp/gantry-bench-cluster-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("cannot create a temporary directory under /tmp");
    dir = tmpl;
    coordinator = std::make_unique<ChildProcess>(
        std::vector<std::string>{o.gantry, "coordinator", "--bind", "tcp://127.0.0.1:0", "--data", dir + "/data",
                                 "--max-jobs", std::to_string(max_jobs)},
        dir + "/coordinator.log");
    const std::regex listening("listening on (tcp://127\\.0\\.0\\.1:[0-9]+)");
    std::smatch m;
    const auto begin = Clock::now();
    std::string log;
    while (!std::regex_search(log = coordinator->log(), m, listening)) {
      if (seconds_since(begin) > 30) throw std::runtime_error("the coordinator did not start: " + log);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    endpoint = m[1];
  }
  ~LocalCluster() {
    workers.clear();
    coordinator.reset();
    std::filesystem::remove_all(dir);
  }
  void add_worker(const ClusterBenchOptions& o, int slots) {
    const std::string name = "bench-" + std::to_string(workers.size());
    workers.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{o.gantry, "worker", "--connect", endpoint, "--rollouts", std::to_string(slots), "--name", name},
        dir + "/" + name + ".log"));
  }
  ClientOptions client() const {
    ClientOptions c;
    c.endpoint = endpoint;
    c.timeout_seconds = 30;
    return c;
  }
  nlohmann::json status() const {
    auto reply = call_coordinator(client(), wire::Type::status, {});
    if (!reply) throw std::runtime_error(reply.error().message);
    return nlohmann::json::parse(reply.value().data);
  }
  void wait_for_slots(int slots) const {
    const auto begin = Clock::now();
    while (status()["slots"].get<int>() < slots) {
      if (seconds_since(begin) > 30) throw std::runtime_error("workers did not join the coordinator");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  std::string submit(const JobSpec& spec) const {
    wire::Request request;
    request.spec = spec;
    auto reply = call_coordinator(client(), wire::Type::submit, request);
    if (!reply) throw std::runtime_error(reply.error().message);
    return nlohmann::json::parse(reply.value().data)["job"];
  }
  JobRecord wait_for(const std::string& id) const {
    for (;;) {
      wire::Request request;
      request.job = id;
      auto reply = call_coordinator(client(), wire::Type::jobs, request);
      if (!reply) throw std::runtime_error(reply.error().message);
      auto jobs = wire::job_records_from_json(reply.value().data);
      if (!jobs || jobs.value().empty()) throw std::runtime_error("no record of job " + id);
      const JobRecord& job = jobs.value().front();
      if (job.state != JobState::queued && job.state != JobState::running) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a client's request costs the coordinator too
    }
  }
};

struct Problem {
  Graph graph;
  gantry::Cluster cluster;
  std::unique_ptr<CostTable> costs;
  std::string label;
  Problem(const std::string& workload, const std::string& cluster_name) : label(workload) {
    auto g = make_workload(workload);
    if (!g) throw std::runtime_error(g.error().message);
    graph = std::move(g).value();
    auto c = gantry::Cluster::load(cluster_name);
    if (!c) throw std::runtime_error(c.error().message);
    cluster = std::move(c).value();
    costs = std::make_unique<CostTable>(graph, cluster);
  }
  TuneProblem tune() const { return TuneProblem{graph, cluster, *costs, SimOptions{}, label, ""}; }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The embedded job in a process of its own, as a user runs it (`gantry tune` without
// --coordinator): the bench's own process is no clean place to time a rollout in.
// A rate job's evaluations per second, and the share of its time its rollouts spent working on
// its tasks (the rest they waited for work: the cost of the transport, free of the machine's
// speed, which varies from run to run on a shared host).
struct RateSample {
  double rate = 0, busy = 0;
};

RateSample embedded_rate(const ClusterBenchOptions& o, int repeat) {
  char tmpl[] = "/tmp/gantry-bench-cluster-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("cannot create a temporary directory under /tmp");
  const std::string dir = tmpl;
  ChildProcess tune({o.gantry, "tune", "--workload", o.workload, "--cluster", o.cluster, "--rollouts", "1", "--evals",
                     std::to_string(o.evaluations), "--batch-evals", std::to_string(o.batch_evaluations), "--budget", "1h",
                     "--seed", std::to_string(repeat + 1), "--data", dir + "/data", "-f", "json"},
                    dir + "/tune.log");
  const int status = tune.wait(3600);
  const std::string log = tune.log();
  std::filesystem::remove_all(dir);
  const auto open = log.find('{'), close = log.rfind('}');
  if (status != 0 || open == std::string::npos || close == std::string::npos)
    throw std::runtime_error("the embedded tuning job failed (status " + std::to_string(status) + "): " + log);
  const auto outcome = nlohmann::json::parse(log.substr(open, close - open + 1));
  const double seconds = outcome["seconds"].get<double>();
  return {outcome["evaluations"].get<double>() / seconds, outcome["rollout_seconds"].get<double>() / seconds};
}

RateSample remote_rate(const Problem& problem, const ClusterBenchOptions& o, int workers, int repeat) {
  LocalCluster cluster(o);
  for (int w = 0; w < workers; ++w) cluster.add_worker(o, 1);
  cluster.wait_for_slots(workers);
  TuneOptions t;
  t.budget_seconds = 0;
  t.budget_evaluations = o.evaluations;
  t.batch_evaluations = o.batch_evaluations;
  t.seed = static_cast<std::uint64_t>(repeat + 1);
  const JobRecord job = cluster.wait_for(cluster.submit(make_job_spec(problem.tune(), t)));
  if (job.state != JobState::complete) throw std::runtime_error("job " + job.id + " " + to_string(job.state) + ": " + job.message);
  const double seconds = job.finished - job.started;
  double busy_seconds = 0;  // the job is the cluster's only one: all its workers' time was for it
  const nlohmann::json status = cluster.status();
  for (const auto& w : status["workers"]) busy_seconds += w["busy_seconds"].get<double>();
  return {job.evaluations / seconds, busy_seconds / (workers * seconds)};
}

// Peers that say hello with `slots` slots each and answer every anneal task at once (the start
// placement, one evaluation), until `stop`. A job's heuristics (a `place` task) they run for real,
// with the problem content fetched as a worker does, so the job has a start to hand out.
void run_echo_peers(const std::string& endpoint, int peers, int slots, const std::atomic<bool>& stop) {
  zmq::context_t context{1};
  std::vector<zmq::socket_t> sockets;
  for (int p = 0; p < peers; ++p) {
    sockets.emplace_back(context, zmq::socket_type::dealer);
    sockets.back().set(zmq::sockopt::linger, 0);
    sockets.back().set(zmq::sockopt::routing_id, "echo-" + std::to_string(p));
    sockets.back().connect(endpoint);
  }
  const auto send = [](zmq::socket_t& socket, wire::Type type, const std::string& payload) {
    const std::uint8_t header[2] = {wire::kProtocolVersion, static_cast<std::uint8_t>(type)};
    std::array<zmq::const_buffer, 3> frames{zmq::buffer(header, 1), zmq::buffer(header + 1, 1), zmq::buffer(payload)};
    zmq::send_multipart(socket, frames);
  };
  for (int p = 0; p < peers; ++p)
    send(sockets[p], wire::Type::hello,
         wire::encode(wire::Hello{"echo-" + std::to_string(p), "bench", 0, slots, {kAnnealTask, kPlaceTask}}));
  ProblemCache cache;
  std::vector<std::vector<wire::Assign>> waiting(peers);  // place tasks waiting for their problem
  const auto run_place = [&](int p, const wire::Assign& assign, const std::shared_ptr<const BuiltProblem>& problem) {
    std::unique_ptr<SlotScratch> scratch;
    auto body = run_place_task(problem, assign.task, scratch);
    wire::Done done;
    done.lease = assign.lease;
    done.result.sequence = assign.task.sequence;
    done.result.worker = "echo-" + std::to_string(p);
    if (body) done.result.body = body.value();
    else done.result.error = body.error().message;
    send(sockets[p], wire::Type::done, wire::encode(done));
  };
  const auto on_message = [&](int p, wire::Type type, std::string_view payload) {
    if (type == wire::Type::problem) {
      auto content = wire::decode<wire::ProblemContent>(payload);
      if (!content) return;
      auto built = cache.build(content.value().spec);
      for (const wire::Assign& assign : waiting[p])
        if (built) run_place(p, assign, built.value());
      waiting[p].clear();
      return;
    }
    if (type != wire::Type::assign) return;
    auto assign = wire::decode<wire::Assign>(payload);
    if (!assign) return;
    const RolloutTask& task = assign.value().task;
    if (task.kind == kPlaceTask) {
      if (auto problem = cache.find(task.problem)) return run_place(p, assign.value(), problem);
      waiting[p].push_back(assign.value());
      send(sockets[p], wire::Type::need_problem, wire::encode(wire::NeedProblem{task.problem}));
      return;
    }
    auto request = decode_batch_request(task.body);
    if (!request) return;
    BatchResult result;
    result.evaluations = 1;
    result.best = request.value().start;
    result.last = result.best;
    result.best_makespan = result.mean_makespan = 1.0;
    wire::Done done;
    done.lease = assign.value().lease;
    done.result.sequence = task.sequence;
    done.result.body = encode_body(result);
    done.result.worker = "echo-" + std::to_string(p);
    send(sockets[p], wire::Type::done, wire::encode(done));
  };
  std::vector<zmq::pollitem_t> items;
  for (auto& socket : sockets) items.push_back({socket.handle(), 0, ZMQ_POLLIN, 0});
  auto last_beat = Clock::now();
  while (!stop) {
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100));
    for (int p = 0; p < peers; ++p) {
      std::vector<zmq::message_t> frames;
      while (zmq::recv_multipart(sockets[p], std::back_inserter(frames), zmq::recv_flags::dontwait)) {
        if (frames.size() == 3) {
          auto type = wire::parse_header(frames[0].to_string_view(), frames[1].to_string_view());
          if (type) on_message(p, type.value(), frames[2].to_string_view());
        }
        frames.clear();
      }
    }
    if (seconds_since(last_beat) > 0.5) {
      for (auto& socket : sockets) send(socket, wire::Type::heartbeat, wire::encode_empty());
      last_beat = Clock::now();
    }
  }
}
// A tiny-task job (one evaluation of a 10-op graph per batch, so messages dominate) on whatever
// serves `cluster`: tasks committed per second in the middle of the job, and the coordinator's
// CPU time per message (an assign and a done per task).
struct MessageRate {
  double tasks_per_second = 0, cpu_us_per_message = 0;
};

MessageRate tiny_task_rate(const LocalCluster& cluster, const ClusterBenchOptions& o) {
  const Problem tiny("random:ops=10", "identical:2");
  TuneOptions t;
  t.budget_seconds = o.message_seconds;
  t.batch_evaluations = 1;
  const std::string id = cluster.submit(make_job_spec(tiny.tune(), t));
  std::this_thread::sleep_for(std::chrono::duration<double>(o.message_seconds * 0.2));
  const long before = cluster.status()["committed"].get<long>();
  const double cpu_before = cluster.coordinator->cpu_seconds();
  const auto begin = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.message_seconds * 0.5));
  const long after = cluster.status()["committed"].get<long>();
  const double cpu = cluster.coordinator->cpu_seconds() - cpu_before;
  MessageRate rate;
  rate.tasks_per_second = (after - before) / seconds_since(begin);
  rate.cpu_us_per_message = after > before ? 1e6 * cpu / (2.0 * (after - before)) : 0;
  cluster.wait_for(id);
  return rate;
}

}  // namespace

ClusterBenchResult run_cluster_bench(const ClusterBenchOptions& o) {
  ClusterBenchResult result;
  const Problem problem(o.workload, o.cluster);
  // Evaluation rates: the same job embedded, on 1 and on 2 worker processes (1 slot each). The
  // setups take turns within each repeat, so a machine that speeds up or slows down over the run
  // (shared hosts do) affects them alike.
  if (o.runs("rates")) {
    const std::vector<int> setups = {0, 1, 2};  // worker processes (0 = embedded)
    for (int workers : setups) {
      ClusterBenchRate rate;
      rate.slots = std::max(1, workers);
      rate.setup = workers == 0 ? "embedded, 1 slot" : workers == 1 ? "1 worker, 1 slot" : "2 workers, 1 slot each";
      result.rates.push_back(rate);
    }
    for (int r = 0; r < std::max(1, o.repeats); ++r)
      for (std::size_t i = 0; i < setups.size(); ++i) {
        const RateSample sample = setups[i] == 0 ? embedded_rate(o, r) : remote_rate(problem, o, setups[i], r);
        result.rates[i].samples.push_back(sample.rate);
        result.rates[i].busy.push_back(sample.busy);
      }
    // Per slot against the embedded job of the same repeat (same seed, same work), the median of
    // those ratios: drift between repeats cancels out.
    const std::vector<double>& embedded = result.rates.front().samples;
    for (ClusterBenchRate& rate : result.rates) {
      rate.median = median(rate.samples);
      rate.per_slot = rate.median / rate.slots;
      std::vector<double> ratios;
      for (std::size_t r = 0; r < rate.samples.size(); ++r) ratios.push_back(rate.samples[r] / rate.slots / embedded[r]);
      rate.vs_embedded = median(ratios);
      rate.median_busy = median(rate.busy);
    }
  }
  // Tiny tasks: one evaluation of a 10-op graph per batch, so the coordinator's messages dominate.
  if (o.runs("tiny")) {
    LocalCluster cluster(o);
    cluster.add_worker(o, o.tiny_slots);
    cluster.add_worker(o, o.tiny_slots);
    cluster.wait_for_slots(2 * o.tiny_slots);
    const MessageRate rate = tiny_task_rate(cluster, o);
    result.tasks_per_second = rate.tasks_per_second;
    result.cpu_us_per_message = rate.cpu_us_per_message;
  }
  // The coordinator alone with tiny tasks: echo peers in this process take the workers' place and
  // answer every assign at once, so the coordinator (tuner, pool, store, gateway) does all the work
  // it does for real workers and the machine's cores are not shared with worker processes.
  if (o.runs("echo")) {
    LocalCluster cluster(o);
    struct Peers {  // stopped and joined however the measurement ends
      std::atomic<bool> stop{false};
      std::thread thread;
      ~Peers() {
        stop = true;
        if (thread.joinable()) thread.join();
      }
    } peers;
    peers.thread = std::thread([&] { run_echo_peers(cluster.endpoint, o.echo_peers, o.echo_slots, peers.stop); });
    cluster.wait_for_slots(o.echo_peers * o.echo_slots);
    const MessageRate rate = tiny_task_rate(cluster, o);
    result.echo_tasks_per_second = rate.tasks_per_second;
    result.echo_cpu_us_per_message = rate.cpu_us_per_message;
  }
  // Ingest: one peer says hello, then sends results for leases that are not outstanding, as fast as
  // it can; each is read, checked, decoded and settled (counted stale) by the coordinator.
  if (o.runs("ingest")) {
    LocalCluster cluster(o);
    zmq::context_t context{1};
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::routing_id, "bench-peer");
    socket.set(zmq::sockopt::sndhwm, 0);
    socket.connect(cluster.endpoint);
    const auto send = [&](wire::Type type, const std::string& payload) {
      const std::uint8_t header[2] = {wire::kProtocolVersion, static_cast<std::uint8_t>(type)};
      std::array<zmq::const_buffer, 3> frames{zmq::buffer(header, 1), zmq::buffer(header + 1, 1), zmq::buffer(payload)};
      zmq::send_multipart(socket, frames);
    };
    send(wire::Type::hello, wire::encode(wire::Hello{"bench-peer", "bench", 0, 0, {}}));
    BatchResult batch;
    batch.evaluations = 1;
    batch.best.device.assign(64, 0);  // a result of a 64-op placement
    batch.last = batch.best;
    wire::Done done;
    done.result.body = encode_body(batch);
    const std::string payload = wire::encode(done);
    const auto begin = Clock::now();
    for (int i = 0; i < o.ingest_messages; ++i) send(wire::Type::done, payload);
    while (cluster.status()["stale_results"].get<long>() < o.ingest_messages) {
      if (seconds_since(begin) > 120) throw std::runtime_error("the coordinator did not settle the results");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    result.ingest_per_second = o.ingest_messages / seconds_since(begin);
  }
  // Memory: one long job running on a worker, the rest queued behind it; then `query best` requests
  // on one socket.
  if (o.runs("memory")) {
    const Problem tiny("random:ops=10", "identical:2");
    LocalCluster cluster(o, 1);
    result.rss_idle_kb = cluster.coordinator->rss_kb();
    cluster.add_worker(o, 1);  // runs the running job's heuristics and batches
    cluster.wait_for_slots(1);
    TuneOptions t;
    t.budget_seconds = 3600;
    const std::string running = cluster.submit(make_job_spec(tiny.tune(), t));
    t.budget_seconds = 1;
    for (int j = 1; j < o.queued_jobs; ++j) cluster.submit(make_job_spec(tiny.tune(), t));
    result.rss_queued_kb = cluster.coordinator->rss_kb();
    zmq::context_t context{1};
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.connect(cluster.endpoint);
    // `query best` of the running job's problem (its best is stored within its first second).
    wire::Request query;
    query.graph = fingerprint(tiny.graph);
    query.runtime = runtime_fingerprint(tiny.cluster, SimOptions{});
    const auto stored = Clock::now();
    const auto stored_best = [&] {
      auto reply = call_coordinator(cluster.client(), wire::Type::query, query);
      return reply && reply.value().data != "null";
    };
    while (!stored_best()) {
      if (seconds_since(stored) > 30) throw std::runtime_error("the running job stored no best");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::uint8_t header[2] = {wire::kProtocolVersion, static_cast<std::uint8_t>(wire::Type::query)};
    const std::string payload = wire::encode(query);
    const auto begin = Clock::now();
    long sent = 0, received = 0;
    while (received < o.query_requests) {
      while (sent < o.query_requests && sent - received < 256) {  // a window of requests in flight
        std::array<zmq::const_buffer, 3> frames{zmq::buffer(header, 1), zmq::buffer(header + 1, 1), zmq::buffer(payload)};
        zmq::send_multipart(socket, frames);
        ++sent;
      }
      std::vector<zmq::message_t> reply;
      if (!zmq::recv_multipart(socket, std::back_inserter(reply))) break;
      ++received;
      if (received == o.query_requests / 5) result.rss_early_queries_kb = cluster.coordinator->rss_kb();
      if (seconds_since(begin) > 300) throw std::runtime_error("query replies stopped coming");
    }
    result.query_per_second = received / seconds_since(begin);
    result.rss_after_queries_kb = cluster.coordinator->rss_kb();
    wire::Request cancel;
    cancel.job = running;
    call_coordinator(cluster.client(), wire::Type::cancel, cancel);
  }
  return result;
}

}  // namespace gantry
