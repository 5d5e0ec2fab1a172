// The wire schema: every message survives encode -> decode with every field; anything damaged
// (truncated, wrong version, wrong type, not a map, a field missing or mistyped, oversized) is an
// error value naming the problem, never an exception or a crash.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <fstream>
#include <random>

#include "actors/net/curve_keys.hpp"
#include "actors/net/wire.hpp"
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
  b.problem = Fingerprint{0x0123456789abcdefull, 0xfedcba9876543210ull};
  b.start = some_placement();
  b.seed = 0xffffffffffffffffull;  // the full unsigned range survives MessagePack
  b.evaluations = 1234;
  b.seconds = 0.25;
  b.t_start = 0.02;
  b.t_end = 2e-4;
  b.perturb = 0.05;
  b.sequence = 99;
  b.attempt = 1;
  b.fail_times = 2;
  return b;
}

}  // namespace

TEST_CASE("wire messages round-trip with every field", "[actors]") {
  SECTION("assign") {
    const Assign a{0x8000000100000002ull, 60.5, some_batch()};
    const Assign d = decode<Assign>(encode(a)).value();
    CHECK(d.lease == a.lease);
    CHECK(d.deadline_seconds == a.deadline_seconds);
    CHECK(d.batch.problem == a.batch.problem);
    CHECK(d.batch.start.device == a.batch.start.device);
    CHECK(d.batch.start.priority == a.batch.start.priority);
    CHECK(d.batch.seed == a.batch.seed);
    CHECK(d.batch.evaluations == 1234);
    CHECK(d.batch.seconds == 0.25);
    CHECK(d.batch.t_start == 0.02);
    CHECK(d.batch.t_end == 2e-4);
    CHECK(d.batch.perturb == 0.05);
    CHECK(d.batch.sequence == 99);
    CHECK(d.batch.attempt == 1);
    CHECK(d.batch.fail_times == 2);
  }
  SECTION("done") {
    Done m;
    m.lease = 42;
    m.result.sequence = 5;
    m.result.evaluations = 777;
    m.result.best_makespan = 1.5e-3;
    m.result.mean_makespan = 2.5e-3;
    m.result.best = some_placement();
    m.result.last = some_placement();
    m.result.last.device[0] = 3;
    m.result.worker = "host/12";
    const Done d = decode<Done>(encode(m)).value();
    CHECK(d.lease == 42);
    CHECK(d.result.sequence == 5);
    CHECK(d.result.evaluations == 777);
    CHECK(d.result.best_makespan == 1.5e-3);
    CHECK(d.result.mean_makespan == 2.5e-3);
    CHECK(d.result.best.device == m.result.best.device);
    CHECK(d.result.last.device == m.result.last.device);
    CHECK(d.result.worker == "host/12");
    CHECK(d.result.error.empty());
  }
  SECTION("hello, problem, request, reply") {
    const Hello h = decode<Hello>(encode(Hello{"w1", "node-3", 4242, 16})).value();
    CHECK((h.name == "w1" && h.host == "node-3" && h.pid == 4242 && h.slots == 16));
    ProblemContent p{Fingerprint{1, 2}, ProblemSpec{"{\"ops\":[]}", "name: x\n", "{\"doppler\":true}", "ffnn"}};
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
    const Request s = decode<Request>(encode(r)).value();
    CHECK((s.id == 9 && s.job == "job-1" && s.spec.budget_seconds == 12 && s.spec.budget_evaluations == 5000 &&
           s.spec.priority == -3 && s.spec.parallelism == 7 && s.spec.seed == 11 && s.spec.problem.graph_label == "ffnn"));
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
  }
  SECTION("job records") {
    JobRecord j;
    j.id = "job-7";
    j.state = JobState::queued;
    j.graph = Fingerprint{3, 4};
    j.evaluations = 10;
    j.best_makespan = 0.5;
    j.message = "waiting";
    auto back = job_records_from_json(job_records_json({j})).value();
    REQUIRE(back.size() == 1);
    CHECK((back[0].id == "job-7" && back[0].state == JobState::queued && back[0].graph == j.graph &&
           back[0].evaluations == 10 && back[0].best_makespan == 0.5 && back[0].message == "waiting"));
  }
}

TEST_CASE("damaged wire messages are errors that say what is wrong", "[actors]") {
  const std::string good = encode(Assign{1, 2, some_batch()});
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
    j["batch"].erase("seed");
    auto bytes = nlohmann::json::to_msgpack(j);
    auto r = decode<Assign>(std::string(bytes.begin(), bytes.end()));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("\"seed\""));
    j = nlohmann::json::from_msgpack(good);
    j["lease"] = "one";
    bytes = nlohmann::json::to_msgpack(j);
    r = decode<Assign>(std::string(bytes.begin(), bytes.end()));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("\"lease\""));
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
  std::ofstream(dir.sub("authorized_keys")) << "# workers\n\n" << with_hash << " worker-1\npublic-key: " << plain << "\n";
  auto keys = read_authorized_keys(dir.sub("authorized_keys"));
  REQUIRE(keys.ok());
  CHECK(keys.value() == std::vector<std::string>{with_hash, plain});
  std::ofstream(dir.sub("bad")) << plain.substr(0, 39) << "\n";
  auto bad = read_authorized_keys(dir.sub("bad"));
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::Contains("bad:1"));
  // A generated pair reads back from its files.
  auto pair = generate_curve_key_pair().value();
  REQUIRE(write_curve_key_files(dir.path, "node", pair).ok());
  CHECK(read_curve_key_pair(dir.sub("node.key")).value().secret_key == pair.secret_key);
  CHECK(read_curve_public_key(dir.sub("node.pub")).value() == pair.public_key);
  CHECK_FALSE(write_curve_key_files(dir.path, "node", pair).ok());  // never overwrites a key
}
