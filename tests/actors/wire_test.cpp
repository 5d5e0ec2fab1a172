// The wire schema: every message survives encode -> decode with every field; anything damaged
// (truncated, wrong version, wrong type, not a map, a field missing or mistyped, oversized) is an
// error value naming the problem, never an exception or a crash.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <nlohmann/json.hpp>
#include <fstream>
#include <future>
#include <random>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "actors/net/client.hpp"
#include "actors/net/curve_keys.hpp"
#include "actors/anneal_task.hpp"
#include "actors/net/wire.hpp"
#include "actors/place_task.hpp"
#include "core/msgpack.hpp"
#include "tests/support/temp_dir.hpp"

using namespace gantry;
using namespace gantry::wire;

namespace {

Placement some_placement() {
  Placement p;
  p.device = {0, 3, 1, 2, 2};
  p.priority = {0.5, -1, 2.25, 0, 1e9};
  return p;
}

BatchRequest some_batch() {
  BatchRequest b;
  b.start = some_placement();
  b.seed = 0xffffffffffffffffull;  // the full unsigned range survives MessagePack
  b.evaluations = 1234;
  b.seconds = 0.25;
  b.t_start = 0.02;
  b.t_end = 2e-4;
  b.perturb = 0.05;
  b.fail_times = 2;
  return b;
}

RolloutTask some_task() {
  RolloutTask t;
  t.kind = "anneal";
  t.problem = Fingerprint{0x0123456789abcdefull, 0xfedcba9876543210ull};
  t.body = encode_body(some_batch());
  t.body += std::string("\0\xff", 2);  // bodies are bytes, not text
  t.seconds = 0.25;
  t.sequence = 99;
  t.attempt = 1;
  return t;
}

}  // namespace

TEST_CASE("wire messages round-trip with every field", "[actors]") {
  SECTION("assign") {
    const Assign a{0x8000000100000002ull, 60.5, some_task()};
    const Assign d = decode<Assign>(encode(a)).value();
    CHECK(d.lease == a.lease);
    CHECK(d.deadline_seconds == a.deadline_seconds);
    CHECK(d.task.kind == "anneal");
    CHECK(d.task.problem == a.task.problem);
    CHECK(d.task.body == a.task.body);
    CHECK(d.task.seconds == 0.25);
    CHECK(d.task.sequence == 99);
    CHECK(d.task.attempt == 1);
  }
  SECTION("done") {
    Done m;
    m.lease = 42;
    m.result.sequence = 5;
    m.result.body = std::string("\x81\0answer", 8);
    m.result.worker = "host/12";
    m.result.error = "it broke";
    m.result.seconds = 0.125;
    const Done d = decode<Done>(encode(m)).value();
    CHECK(d.lease == 42);
    CHECK(d.result.sequence == 5);
    CHECK(d.result.body == m.result.body);
    CHECK(d.result.worker == "host/12");
    CHECK(d.result.error == "it broke");
    CHECK(d.result.seconds == 0.125);
    CHECK_FALSE(d.result.withdrawn);  // an in-process answer, never on the wire
  }
  SECTION("anneal and place task bodies") {
    const BatchRequest b = decode_batch_request(encode_body(some_batch())).value();
    CHECK(b.start.device == some_placement().device);
    CHECK(b.start.priority == some_placement().priority);
    CHECK(b.seed == 0xffffffffffffffffull);
    CHECK(b.evaluations == 1234);
    CHECK(b.seconds == 0.25);
    CHECK(b.t_start == 0.02);
    CHECK(b.t_end == 2e-4);
    CHECK(b.perturb == 0.05);
    CHECK(b.fail_times == 2);
    BatchResult r;
    r.evaluations = 777;
    r.best_makespan = 1.5e-3;
    r.mean_makespan = 2.5e-3;
    r.best = some_placement();
    r.last = some_placement();
    r.last.device[0] = 3;
    const BatchResult back = decode_batch_result(encode_body(r)).value();
    CHECK((back.evaluations == 777 && back.best_makespan == 1.5e-3 && back.mean_makespan == 2.5e-3));
    CHECK((back.best.device == r.best.device && back.last.device == r.last.device));
    const PlaceRequest p = decode_place_request(encode_body(PlaceRequest{"heuristics", 7, 1.5, 300})).value();
    CHECK((p.method == "heuristics" && p.seed == 7 && p.seconds == 1.5 && p.evaluations == 300));
    PlacementOutcome o;
    o.method = "heft";
    o.placement = some_placement();
    o.makespan = 12.5;
    o.planned = 12;
    o.evaluations = 56;
    o.seconds = 0.5;
    const PlacementOutcome q = decode_place_result(encode_body(o)).value();
    CHECK((q.method == "heft" && q.placement.device == o.placement.device && q.makespan == 12.5 && q.planned == 12 &&
           q.evaluations == 56 && q.seconds == 0.5));
    CHECK_THAT(decode_batch_result(encode_body(some_batch())).error().message, Catch::Contains("anneal result"));
  }
  SECTION("hello, problem, request, reply") {
    const Hello h = decode<Hello>(encode(Hello{"w1", "node-3", 4242, 16, {"anneal", "place"}})).value();
    CHECK((h.name == "w1" && h.host == "node-3" && h.pid == 4242 && h.slots == 16));
    CHECK(h.kinds == std::vector<std::string>{"anneal", "place"});
    ProblemContent p{Fingerprint{1, 2}, ProblemSpec{"{\"ops\":[]}", "name: x\n", "{\"doppler\":true}", "ffnn", "", ""}};
    const ProblemContent q = decode<ProblemContent>(encode(p)).value();
    CHECK(q.key == p.key);
    CHECK((q.spec.graph_json == p.spec.graph_json && q.spec.cluster_yaml == p.spec.cluster_yaml &&
           q.spec.sim_json == p.spec.sim_json && q.spec.graph_label == "ffnn"));
    Request r;
    r.id = 9;
    r.job = "job-1";
    r.spec.problem = p.spec;
    r.spec.budget_seconds = 12;
    r.spec.budget_evaluations = 5000;
    r.spec.priority = -3;
    r.spec.parallelism = 7;
    r.spec.seed = 11;
    r.what = "policy";
    r.policy = "mine:3";
    r.key = "0123abcd";
    const Request s = decode<Request>(encode(r)).value();
    CHECK(s.key == "0123abcd");
    CHECK((s.id == 9 && s.job == "job-1" && s.spec.budget_seconds == 12 && s.spec.budget_evaluations == 5000 &&
           s.spec.priority == -3 && s.spec.parallelism == 7 && s.spec.seed == 11 && s.spec.problem.graph_label == "ffnn"));
    CHECK((s.what == "policy" && s.policy == "mine:3"));
    const Reply y = decode<Reply>(encode(Reply{9, false, "no job x", "{}"})).value();
    CHECK((y.id == 9 && !y.ok && y.error == "no job x" && y.data == "{}"));
  }
  SECTION("stored bests") {
    ScheduleRecord r;
    r.graph = Fingerprint{5, 6};
    r.cluster = Fingerprint{7, 8};
    r.graph_label = "ffnn";
    r.method = "search";
    r.makespan = 7.5e11;
    r.placement = some_placement();
    r.model_version = 2;
    r.sim_options = "{\"doppler\":true}";
    const ScheduleRecord back = schedule_record_from_json(schedule_record_json(r)).value();
    CHECK((back.graph == r.graph && back.cluster == r.cluster && back.graph_label == "ffnn" && back.method == "search" &&
           back.makespan == 7.5e11 && back.placement.device == r.placement.device &&
           back.placement.priority == r.placement.priority && back.model_version == 2 && back.sim_options == r.sim_options));
    CHECK((back.scheme.empty() && back.candidate.empty()));
    CHECK(back.measured_runs == 0);
    r.measured = 0.042;  // a best run for real (`gantry execute --best`) carries its measurement
    r.measured_at = 1.7e9;
    r.measured_runs = 5;
    r.measured_backend = "cpu";
    const ScheduleRecord measured = schedule_record_from_json(schedule_record_json(r)).value();
    CHECK((measured.measured == 0.042 && measured.measured_at == 1.7e9 && measured.measured_runs == 5 &&
           measured.measured_backend == "cpu" && measured.makespan == 7.5e11));
    r.placement = Placement{};  // a pipeline best: its scheme and candidate travel too
    r.scheme = R"({"format":"gantry-pipeline-scheme"})";
    r.candidate = R"({"placement":[0,1]})";
    const ScheduleRecord pipeline = schedule_record_from_json(schedule_record_json(r)).value();
    CHECK((pipeline.is_pipeline() && pipeline.scheme == r.scheme && pipeline.candidate == r.candidate));
  }
  SECTION("job records") {
    JobRecord j;
    j.id = "job-7";
    j.state = JobState::queued;
    j.graph = Fingerprint{3, 4};
    j.evaluations = 10;
    j.best_makespan = 0.5;
    j.message = "waiting";
    j.improves = "job-6";  // a background run's source
    auto back = job_records_from_json(job_records_json({j})).value();
    REQUIRE(back.size() == 1);
    CHECK((back[0].id == "job-7" && back[0].state == JobState::queued && back[0].graph == j.graph &&
           back[0].evaluations == 10 && back[0].best_makespan == 0.5 && back[0].message == "waiting"));
    CHECK(back[0].improves == "job-6");
  }
}

TEST_CASE("a learner job's settings and policy listings cross the wire and the store's spec text", "[actors]") {
  JobSpec spec;
  spec.kind = "train";
  spec.problem = ProblemSpec{"{\"ops\":[]}", "name: x\n", "{\"doppler\":true}", "ffnn", "", ""};
  spec.budget_seconds = 60;
  spec.seed = 3;
  TrainSpec& t = spec.train;
  t.more_problems = {ProblemSpec{"{}", "name: y\n", "{}", "chain", "", ""}, ProblemSpec{"[]", "name: z\n", "{}", "llama", "", ""}};
  t.stage = "sim";
  t.episodes = 500;
  t.il_share = 0.25;
  t.name = "mine";
  t.init = "base:3";
  t.init_hex = "00ff";
  t.init_label = "a.policy";
  t.ablation = "plc-only";
  t.hidden = 32;
  t.head = 16;
  t.state = 8;
  t.steps = 2;
  t.batch = 12;
  t.graphs_per_update = 3;
  t.learning_rate = 5e-4;
  t.entropy = 0.01;
  t.epsilon = 0.05;
  t.imitate = "pick";
  t.max_staleness = 4;
  t.stale = "drop";
  t.progress_every = 99;
  t.measured_share = 0.375;
  const auto same = [&](const JobSpec& b) {
    const TrainSpec& u = b.train;
    CHECK((b.kind == "train" && b.budget_seconds == 60 && b.seed == 3 && b.problem.graph_label == "ffnn"));
    REQUIRE(u.more_problems.size() == 2);
    CHECK((u.more_problems[0].graph_label == "chain" && u.more_problems[1].cluster_yaml == "name: z\n"));
    CHECK((u.stage == "sim" && u.episodes == 500 && u.il_share == 0.25 && u.name == "mine" && u.init == "base:3" &&
           u.init_hex == "00ff" && u.init_label == "a.policy" && u.ablation == "plc-only"));
    CHECK((u.hidden == 32 && u.head == 16 && u.state == 8 && u.steps == 2 && u.batch == 12 && u.graphs_per_update == 3));
    CHECK((u.learning_rate == 5e-4 && u.entropy == 0.01 && u.epsilon == 0.05 && u.imitate == "pick" &&
           u.max_staleness == 4 && u.stale == "drop" && u.progress_every == 99 && u.measured_share == 0.375));
  };
  Request r;
  r.spec = spec;
  same(decode<Request>(encode(r)).value().spec);
  same(parse_job_spec_text(job_spec_text(spec)).value());

  // A tuning job's spec carries no learner settings, and a spec stored before they existed reads.
  JobSpec tune;
  tune.problem = spec.problem;
  const std::string text = job_spec_text(tune);
  CHECK(text.find("\"train\"") == std::string::npos);
  CHECK(parse_job_spec_text(text).value().kind == "tune");
  // A damaged learner setting is named by its path.
  const std::string damaged = std::regex_replace(job_spec_text(spec), std::regex("\"label\":\"llama\""), "\"label\":7");
  CHECK_THAT(parse_job_spec_text(damaged).error().message, Catch::Contains("train.more_problems[1]") && Catch::Contains("label"));

  PolicyRecord p;
  p.name = "mine";
  p.version = 4;
  p.weights = std::string("\0\x01\xfe\xff weights", 11);  // bytes of every kind, as hex on the wire
  p.job = "job-7";
  p.curve = "episodes,seconds\n8,0.5\n";
  p.stage = "il";
  p.ablation = "gdp";
  p.graphs = "a,b";
  p.cluster_name = "identical:8";
  p.devices = 8;
  p.episodes = 1234;
  p.seconds = 5.5;
  p.best_ratio = 0.75;
  p.greedy_ratio = 0.875;
  p.parent = "base:3";
  p.created = 1.5e9;
  const auto listed = policy_records_from_json(policy_records_json({p})).value();
  REQUIRE(listed.size() == 1);
  const auto one = policy_record_from_json(policy_record_json(p));
  REQUIRE(one.ok());
  for (const PolicyRecord& q : {listed[0], one.value()}) {
    CHECK((q.name == "mine" && q.version == 4 && q.weights == p.weights && q.stage == "il" && q.ablation == "gdp" && q.graphs == "a,b"));
    CHECK((q.cluster_name == "identical:8" && q.devices == 8 && q.episodes == 1234 && q.seconds == 5.5 && q.best_ratio == 0.75 &&
           q.greedy_ratio == 0.875 && q.parent == "base:3" && q.created == 1.5e9));
    CHECK((q.job == "job-7" && q.curve == p.curve));
  }
  // A listing from a coordinator that knew no jobs, curves or weights reads; damaged weights do not.
  nlohmann::json old = nlohmann::json::parse(policy_records_json({p}));
  for (const char* key : {"job", "curve", "weights"}) old[0].erase(key);
  const auto older = policy_records_from_json(old.dump());
  REQUIRE(older.ok());
  CHECK((older.value()[0].name == "mine" && older.value()[0].weights.empty() && older.value()[0].job.empty()));
  nlohmann::json bad = nlohmann::json::parse(policy_record_json(p));
  bad["weights"] = "not hex";
  CHECK_THAT(policy_record_from_json(bad.dump()).error().message, Catch::Contains("weights"));
}

TEST_CASE("damaged wire messages are errors that say what is wrong", "[actors]") {
  const std::string good = encode(Assign{1, 2, some_task()});
  SECTION("every truncation of a message") {
    for (std::size_t n = 0; n < good.size(); ++n) {
      INFO(n);
      CHECK_FALSE(decode<Assign>(std::string_view(good).substr(0, n)).ok());
    }
  }
  SECTION("random bytes never crash the decoder") {
    std::mt19937_64 rng(3);
    for (int i = 0; i < 2000; ++i) {
      std::string bytes = good;
      for (int k = 0; k < 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      (void)decode<Assign>(bytes);  // an error or, rarely, a still-valid message: never a throw
      (void)decode<Done>(bytes);
      (void)decode<Request>(bytes);
    }
  }
  SECTION("a newer schema version") {
    auto j = nlohmann::json::from_msgpack(good);
    j["v"] = kSchemaVersion + 1;
    const auto bytes = nlohmann::json::to_msgpack(j);
    auto r = decode<Assign>(std::string(bytes.begin(), bytes.end()));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("schema version"));
  }
  SECTION("a missing or mistyped field names the field") {
    auto j = nlohmann::json::from_msgpack(good);
    j["task"].erase("sequence");
    auto bytes = nlohmann::json::to_msgpack(j);
    auto r = decode<Assign>(std::string(bytes.begin(), bytes.end()));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("assign.task: field \"sequence\" is missing"));
    j = nlohmann::json::from_msgpack(good);
    j["lease"] = "one";
    bytes = nlohmann::json::to_msgpack(j);
    r = decode<Assign>(std::string(bytes.begin(), bytes.end()));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("\"lease\""));
  }
  SECTION("a field a newer writer added is stepped over; a field twice is refused") {
    auto j = nlohmann::json::from_msgpack(good);
    j["task"]["priority_hint"] = {{"nested", {1, 2, 3}}};
    auto bytes = nlohmann::json::to_msgpack(j);
    auto r = decode<Assign>(std::string(bytes.begin(), bytes.end()));
    REQUIRE(r.ok());
    CHECK(r.value().task.sequence == 99);
    MsgpackWriter w;  // {"v": 2, "key": ..., "key": ...}
    w.map(3);
    w.str("v");
    w.uint(kSchemaVersion);
    w.str("key");
    w.str(Fingerprint{1, 2}.hex());
    w.str("key");
    w.str(Fingerprint{3, 4}.hex());
    auto twice = decode<NeedProblem>(w.bytes());
    REQUIRE_FALSE(twice.ok());
    CHECK_THAT(twice.error().message, Catch::Contains("\"key\" appears twice"));
  }
  SECTION("a worker's seconds of work and a task's seconds are times: 0 to a year") {
    for (const double bad : {-1e300, -1.0, 365.0 * 86400 + 1}) {
      TaskResult r;
      r.seconds = bad;
      auto done = decode<Done>(encode(Done{7, r}));
      INFO(bad);
      REQUIRE_FALSE(done.ok());
      CHECK_THAT(done.error().message, Catch::Contains("\"seconds\" is not a time in seconds (0 to a year)"));
      RolloutTask t = some_task();
      t.seconds = bad;
      CHECK_FALSE(decode<Assign>(encode(Assign{1, 2, t})).ok());
    }
    TaskResult r;
    r.seconds = 0;
    CHECK(decode<Done>(encode(Done{7, r})).ok());
  }
  SECTION("trailing bytes after the map") {
    CHECK_THAT(decode<Assign>(good + "\x01").error().message, Catch::Contains("not MessagePack"));
  }
  SECTION("not a map") {
    const auto bytes = nlohmann::json::to_msgpack(nlohmann::json::array({1, 2}));
    CHECK_FALSE(decode<Hello>(std::string(bytes.begin(), bytes.end())).ok());
  }
  SECTION("headers: version and type frames") {
    const char v = static_cast<char>(kProtocolVersion), hello = 1;
    CHECK(parse_header(std::string(1, v), std::string(1, hello)).ok());
    CHECK_THAT(parse_header(std::string(1, static_cast<char>(kProtocolVersion + 1)), std::string(1, hello)).error().message,
               Catch::Contains("protocol version"));
    CHECK_FALSE(parse_header(std::string(1, v), std::string(1, '\0')).ok());
    CHECK_FALSE(parse_header(std::string(1, v), std::string(1, static_cast<char>(kLastType + 1))).ok());
    CHECK_FALSE(parse_header("", std::string(1, hello)).ok());
    CHECK_FALSE(parse_header(std::string(1, v), "ab").ok());
  }
  SECTION("an oversized payload is refused unread") {
    const std::string huge(kMaxPayloadBytes + 1, '\x80');
    auto r = decode<Hello>(huge);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("over the limit"));
  }
}

TEST_CASE("authorized-keys files: comments, names, pasted .pub lines, and keys containing '#'", "[actors]") {
  gantry::testing::TempDir dir;
  // Z85 (ZeroMQ RFC 32) includes '#': a key may contain it anywhere.
  const std::string with_hash = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]#yZ";
  const std::string plain = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
  std::ofstream(dir.file("authorized_keys")) << "# workers\n\n" << with_hash << " worker-1\npublic-key: " << plain << "\n";
  auto keys = read_authorized_keys(dir.file("authorized_keys"));
  REQUIRE(keys.ok());
  CHECK(keys.value() == std::vector<std::string>{with_hash, plain});
  std::ofstream(dir.file("bad")) << plain.substr(0, 39) << "\n";
  auto bad = read_authorized_keys(dir.file("bad"));
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("bad:1"));
  // A generated pair reads back from its files.
  auto pair = generate_curve_key_pair().value();
  REQUIRE(write_curve_key_files(dir.path(), "node", pair).ok());
  CHECK(read_curve_key_pair(dir.file("node.key")).value().secret_key == pair.secret_key);
  CHECK(read_curve_public_key(dir.file("node.pub")).value() == pair.public_key);
  CHECK_FALSE(write_curve_key_files(dir.path(), "node", pair).ok());  // never overwrites a key
  struct stat info {};
  REQUIRE(::stat(dir.file("node.key").c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);  // the secret is private from its creation
  // A name, not a path: nothing is written outside the folder, nor a hidden ".key".
  for (const std::string name : {"../evil", "", ".hidden", "a/b"}) {
    INFO(name);
    CHECK_THAT(write_curve_key_files(dir.path(), name, pair).error().message, Catch::Contains("key name '" + name + "'"));
  }
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/../evil.key"));
}

TEST_CASE("a measurement job's settings cross the wire and the store's spec text; a bad one is named", "[actors]") {
  JobSpec spec;
  spec.kind = "measure";
  spec.problem = ProblemSpec{"{\"ops\":[]}", "name: x\n", "{}", "ffnn", "", ""};
  spec.measure.placement.device = {0, 1, 1, 0};
  spec.measure.placement.priority = {0.5, 1.5, 2.5, 3.5};
  spec.measure.repeats = 7;
  spec.measure.warmup = 2;
  spec.measure.throttle_links = true;
  spec.measure.pin_threads = false;
  const auto same = [&](const JobSpec& b) {
    const MeasureRequest& m = b.measure;
    CHECK(b.kind == "measure");
    CHECK(m.placement.device == std::vector<std::int32_t>{0, 1, 1, 0});
    CHECK(m.placement.priority == std::vector<double>{0.5, 1.5, 2.5, 3.5});
    CHECK((m.repeats == 7 && m.warmup == 2 && m.throttle_links && !m.pin_threads));
  };
  Request r;
  r.spec = spec;
  same(decode<Request>(encode(r)).value().spec);
  auto text = parse_job_spec_text(job_spec_text(spec));
  INFO(job_spec_text(spec));
  REQUIRE(text.ok());
  same(text.value());
  // A measure request with no timed run is refused where it is read.
  spec.measure.repeats = 0;
  r.spec = spec;
  CHECK_THAT(decode<Request>(encode(r)).error().message, Catch::Contains("measure") && Catch::Contains("repeats"));
}

namespace {

// A coordinator whose submit replies are lost: it takes every submit and answers none, and answers
// a status saying whether it knows submit keys. The keys of the submits it took.
std::vector<std::string> lose_submit_replies(zmq::socket_t& socket, bool knows_keys, std::future<Result<Reply>>& client) {
  std::vector<std::string> keys;
  while (client.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
    zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 1, std::chrono::milliseconds(20));
    if (!(items[0].revents & ZMQ_POLLIN)) continue;
    std::vector<zmq::message_t> frames;
    REQUIRE(zmq::recv_multipart(socket, std::back_inserter(frames)));
    REQUIRE(frames.size() == 4);  // routing id, version, type, payload
    const Request request = decode<Request>(frames[3].to_string_view()).value();
    if (static_cast<Type>(frames[2].data<std::uint8_t>()[0]) == Type::submit) {
      keys.push_back(request.key);
      continue;
    }
    const std::string payload = encode(Reply{request.id, true, "", nlohmann::json{{"submit_keys", knows_keys}}.dump()});
    const std::uint8_t header[2] = {kProtocolVersion, static_cast<std::uint8_t>(Type::reply)};
    std::array<zmq::const_buffer, 4> out{zmq::buffer(frames[0].data(), frames[0].size()), zmq::buffer(header, 1),
                                         zmq::buffer(header + 1, 1), zmq::buffer(payload)};
    zmq::send_multipart(socket, out);
  }
  return keys;
}

}  // namespace

TEST_CASE("a submit whose reply is lost is sent again with its key where the coordinator knows keys", "[actors]") {
  zmq::context_t context;
  for (const bool knows_keys : {true, false}) {
    zmq::socket_t coordinator(context, zmq::socket_type::router);
    coordinator.set(zmq::sockopt::linger, 0);
    coordinator.bind("tcp://127.0.0.1:*");
    ClientOptions client;
    client.endpoint = coordinator.get(zmq::sockopt::last_endpoint);
    client.timeout_seconds = 1;
    std::vector<std::string> retries;
    auto submitted = std::async(std::launch::async, [&] {
      return submit_to_coordinator(client, Request{}, 3, [&](const std::string& line) { retries.push_back(line); });
    });
    const std::vector<std::string> keys = lose_submit_replies(coordinator, knows_keys, submitted);
    const auto reply = submitted.get();
    REQUIRE_FALSE(reply.ok());
    CHECK_THAT(reply.error().message, Catch::Contains("the job may have been accepted"));
    if (knows_keys) {  // three submits, one key (made by the client: the request had none)
      REQUIRE(keys.size() == 3);
      CHECK(keys[0].size() == 32);
      CHECK(keys[1] == keys[0]);
      CHECK(keys[2] == keys[0]);
      REQUIRE(retries.size() == 2);
      CHECK_THAT(retries[1], Catch::Contains("submitting again with the same key (attempt 3 of 3)"));
    } else {  // an older coordinator would make the job again: sent once
      CHECK(keys.size() == 1);
      CHECK(retries.empty());
      CHECK_THAT(reply.error().message, Catch::Contains("this coordinator does not know submit keys"));
    }
  }
}
