// The CPU backend's runtime: spreading a graph over devices changes nothing but the times, every
// recorded time respects the dependencies and the simulator's rules, fixed orders are followed or
// their deadlock reported, and bad input is refused with its reason.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include "core/cluster.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/placed_run.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

namespace {

Graph workload(const std::string& spec) {
  auto g = make_workload(spec);
  REQUIRE(g.ok());
  return std::move(g).value();
}

Cluster cluster(const std::string& spec) {
  auto c = Cluster::load(spec);
  REQUIRE(c.ok());
  return std::move(c).value();
}

Placement random_placement(const Graph& g, int devices, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Placement p;
  for (OpId op = 0; op < g.size(); ++op) p.device.push_back(static_cast<std::int32_t>(rng() % devices));
  return p;
}

// A placed run computed what the run on one device did: the same kernels, so the same bits.
void check_same_outputs(const Measurement& placed, const Measurement& alone) {
  REQUIRE(placed.outputs.size() == alone.outputs.size());
  for (std::size_t k = 0; k < placed.outputs.size(); ++k) {
    CHECK(placed.outputs[k].op == alone.outputs[k].op);
    CHECK(placed.outputs[k].values == alone.outputs[k].values);
  }
}

ExecOptions quick(bool keep = false) {
  ExecOptions o;
  o.repeats = 1;
  o.warmup = 0;
  o.keep_outputs = keep;
  o.pin_threads = false;  // tests share the machine with other tests
  return o;
}

// Every dependency and device rule the simulator models holds in the recorded times.
void check_record(const Graph& g, const Placement& p, const RunRecord& run) {
  REQUIRE(run.ops.size() == static_cast<std::size_t>(g.size()));
  std::map<std::pair<OpId, int>, const TransferRecord*> arrival;
  for (const TransferRecord& t : run.transfers) {
    CHECK(arrival.emplace(std::pair{t.op, t.to}, &t).second);  // a tensor travels to a device once
    CHECK(t.from == p.device[static_cast<std::size_t>(t.op)]);
    CHECK(t.start >= run.ops[static_cast<std::size_t>(t.op)].end);
    CHECK(t.end >= t.start);
  }
  std::set<std::pair<OpId, int>> needed;
  double last = 0;
  for (OpId op = 0; op < g.size(); ++op) {
    const OpRecord& r = run.ops[static_cast<std::size_t>(op)];
    CHECK(r.device == p.device[static_cast<std::size_t>(op)]);
    CHECK(r.end >= r.start);
    last = std::max(last, r.end);
    for (OpId src : g.preds(op)) {
      if (p.device[static_cast<std::size_t>(src)] == r.device) {
        CHECK(r.start >= run.ops[static_cast<std::size_t>(src)].end);
        continue;
      }
      needed.insert({src, r.device});
      auto it = arrival.find({src, r.device});
      REQUIRE(it != arrival.end());
      CHECK(r.start >= it->second->end);
    }
  }
  CHECK(needed.size() == run.transfers.size());
  CHECK(run.makespan == last);
  // One stream per device: a device's ops never overlap.
  std::map<int, std::vector<std::pair<double, double>>> busy;
  for (const OpRecord& r : run.ops) busy[r.device].push_back({r.start, r.end});
  for (auto& [device, spans] : busy) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].first >= spans[i - 1].second);
  }
}

}  // namespace

TEST_CASE("a graph spread over devices computes what it computes on one", "[executor]") {
  const Graph g = workload("llama-block:blocks=3,batch=1,seq=12,hidden=32,heads=4,ffn=24,dtype_bytes=4");
  const Placement one = random_placement(g, 1, 1);
  auto alone = execute_on_cpu(g, one, cluster("identical:1"), quick(true));
  REQUIRE(alone.ok());
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const Placement spread = random_placement(g, 3, seed);
    auto m = execute_on_cpu(g, spread, cluster("identical:3"), quick(true));
    REQUIRE(m.ok());
    check_record(g, spread, m.value().median_run);
    check_same_outputs(m.value(), alone.value());
  }
}

TEST_CASE("the median of the timed runs is reported with its record", "[executor]") {
  const Graph g = workload("ffnn:layers=2,blocks=2,batch=16,hidden=16");
  const Placement p = random_placement(g, 2, 7);
  ExecOptions o = quick();
  o.repeats = 5;
  o.warmup = 2;
  auto m = execute_on_cpu(g, p, cluster("cpu-2"), o);
  REQUIRE(m.ok());
  REQUIRE(m.value().makespans.size() == 5);
  std::vector<double> sorted = m.value().makespans;
  std::sort(sorted.begin(), sorted.end());
  CHECK(m.value().median == sorted[2]);
  CHECK(m.value().min == sorted.front());
  CHECK(m.value().max == sorted.back());
  CHECK(m.value().median_run.makespan == sorted[2]);
  check_record(g, p, m.value().median_run);
}

TEST_CASE("ops without an operation run proxy GEMMs and keep the dependencies", "[executor]") {
  const Graph g = workload("random:ops=200,layers=20,flops=1e6");
  REQUIRE_FALSE(g.has_operations());
  const Placement p = random_placement(g, 2, 3);
  auto m = execute_on_cpu(g, p, cluster("cpu-2"), quick());
  REQUIRE(m.ok());
  check_record(g, p, m.value().median_run);
}

TEST_CASE("a throttled transfer lasts at least latency plus bytes over bandwidth", "[executor]") {
  const std::string yaml =
      "name: slow\ndevices:\n  - {count: 2, kind: CPU, peak_tflops: 0.05, mem_bandwidth_gbs: 10, memory_gib: 1}\n"
      "default_link: {bandwidth_gbs: 0.000001, latency_us: 2000}\n";  // 1000 bytes/s, 2 ms
  auto slow = Cluster::from_yaml(yaml, "slow.yaml");
  REQUIRE(slow.ok());
  const Graph g = workload("ffnn:layers=1,blocks=1,batch=2,hidden=2");  // mm -> sum -> relu, 16-byte tiles
  Placement p;
  p.device = {0, 1, 0};
  ExecOptions o = quick();
  o.throttle_links = true;
  auto m = execute_on_cpu(g, p, slow.value(), o);
  REQUIRE(m.ok());
  const RunRecord& run = m.value().median_run;
  REQUIRE(run.transfers.size() == 2);
  for (const TransferRecord& t : run.transfers) {
    CHECK(t.bytes == 16);
    CHECK(t.end - t.start >= 0.002 + 16 / 1000.0);
  }
  check_record(g, p, run);
}

TEST_CASE("a device without a copy engine copies its outputs itself, between its ops", "[executor]") {
  // Throttled 2 ms copies: with a link thread, the source device would run its next ready op
  // during them; here it runs nothing until its copies are made.
  const auto two_devices = [](bool copy_engine) {
    auto c = Cluster::from_yaml(std::string("name: self\ndevices:\n  - {count: 2, kind: CPU, peak_tflops: 0.05, "
                                            "mem_bandwidth_gbs: 10, memory_gib: 1, copy_engine: ") +
                                    (copy_engine ? "true" : "false") +
                                    "}\ndefault_link: {bandwidth_gbs: 10, latency_us: 2000}\n",
                                "self.yaml");
    REQUIRE(c.ok());
    return std::move(c).value();
  };
  const Cluster self = two_devices(false);
  ExecOptions throttled = quick();
  throttled.throttle_links = true;
  // A fork shows the difference: a on device 0 feeds b on device 1 and c on device 0. With a copy
  // engine c runs during a's copy; without one, after it.
  GraphBuilder fork_builder("fork");
  for (const char* name : {"a", "b", "c"}) {
    OpSpec spec;
    spec.name = name;
    spec.flops = 1e5;
    fork_builder.add_op(spec);
  }
  fork_builder.add_edge(0, 1, 4096);
  fork_builder.add_edge(0, 2, 4096);
  const Graph fork = fork_builder.build().value();
  const auto c_waits_for_the_copy = [&](const Cluster& c) {
    auto m = execute_on_cpu(fork, Placement{{0, 1, 0}, {}}, c, throttled);
    REQUIRE(m.ok());
    const RunRecord& run = m.value().median_run;
    REQUIRE(run.transfers.size() == 1);
    return run.ops[2].start >= run.transfers[0].end;
  };
  CHECK_FALSE(c_waits_for_the_copy(two_devices(true)));
  CHECK(c_waits_for_the_copy(self));

  const Graph g = workload("ffnn:layers=2,blocks=2,batch=16,hidden=16");
  const Placement one = random_placement(g, 1, 1);
  auto alone = execute_on_cpu(g, one, cluster("identical:1"), quick(true));
  REQUIRE(alone.ok());
  for (std::uint32_t seed : {4u, 5u}) {
    const Placement p = random_placement(g, 2, seed);
    ExecOptions o = quick(true);
    o.throttle_links = true;
    auto m = execute_on_cpu(g, p, self, o);
    REQUIRE(m.ok());
    const RunRecord& run = m.value().median_run;
    check_record(g, p, run);
    REQUIRE_FALSE(run.transfers.empty());
    for (const TransferRecord& t : run.transfers) {
      CHECK(t.end - t.start >= 0.002);
      for (const OpRecord& r : run.ops)
        if (r.device == t.from) CHECK((r.end <= t.start || r.start >= t.end));
    }
    check_same_outputs(m.value(), alone.value());
  }
}

TEST_CASE("a fixed order is followed, and one that deadlocks is reported", "[executor]") {
  // x and z on device 0, y and w on device 1; x feeds w and y feeds z.
  GraphBuilder b("cross.json");
  for (const char* name : {"x", "y", "z", "w"}) {
    OpSpec op;
    op.name = name;
    op.flops = 1e4;
    op.output_bytes = 64;
    b.add_op(op);
  }
  b.add_edge(0, 3, 64);
  b.add_edge(1, 2, 64);
  auto built = b.build();
  REQUIRE(built.ok());
  const Graph& g = built.value();
  Placement p;
  p.device = {0, 1, 0, 1};

  ExecOptions o = quick();
  o.fixed_order = true;
  o.order = {{0, 2}, {1, 3}};
  auto fine = execute_on_cpu(g, p, cluster("cpu-2"), o);
  REQUIRE(fine.ok());
  const RunRecord& run = fine.value().median_run;
  CHECK(run.ops[2].start >= run.ops[0].end);
  CHECK(run.ops[3].start >= run.ops[1].end);
  check_record(g, p, run);

  o.order = {{2, 0}, {3, 1}};  // z waits for y, behind w, which waits for x, behind z
  auto stuck = execute_on_cpu(g, p, cluster("cpu-2"), o);
  REQUIRE_FALSE(stuck.ok());
  CHECK_THAT(stuck.error().message, Catch::Contains("the fixed order deadlocks: device 0 waits for z, device 1 waits for w"));

  o.order = {{0, 2, 1}, {3}};
  auto misplaced = execute_on_cpu(g, p, cluster("cpu-2"), o);
  REQUIRE_FALSE(misplaced.ok());
  CHECK_THAT(misplaced.error().message, Catch::Contains("lists y on device 0 but the placement puts it on device 1"));
  o.order = {{0, 2}, {3}};
  auto missing = execute_on_cpu(g, p, cluster("cpu-2"), o);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("the fixed order leaves out y"));
}

TEST_CASE("bad placements and failing kernels are errors that say why", "[executor]") {
  const Graph g = workload("ffnn:layers=1,blocks=2,batch=4,hidden=4");
  Placement p = random_placement(g, 3, 1);
  auto wrong_devices = execute_on_cpu(g, p, cluster("cpu-2"), quick());
  REQUIRE_FALSE(wrong_devices.ok());
  CHECK_THAT(wrong_devices.error().message, Catch::Contains("placement"));

  GraphBuilder b("bad.json");
  OpSpec mm;
  mm.name = "mm";
  Operation matmul;
  matmul.fn = TensorFn::matmul;
  matmul.operands = {Operand::input("a", {4, 6}), Operand::parameter("b", {3, 3}, 1)};
  mm.operation = matmul;
  b.add_op(mm);
  auto bad = b.build();
  REQUIRE(bad.ok());
  Placement single;
  single.device = {0};
  auto failed = execute_on_cpu(bad.value(), single, cluster("identical:1"), quick());
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.error().message, Catch::StartsWith("op mm: "));
}

TEST_CASE("a tensor larger than its device's memory is refused before anything is allocated", "[executor]") {
  // cpu-2's devices have 8 GiB each (configs/clusters/cpu-2.yaml).
  const auto two_ops = [](double output_bytes, double flops) {
    GraphBuilder b("big.json");
    OpSpec first;
    first.output_bytes = output_bytes;
    first.flops = flops;
    b.add_op(first);
    b.add_op(OpSpec{});
    b.add_edge(0, 1);
    return b.build().value();
  };
  const Placement spread{{0, 1}, {}};
  SECTION("an output of 1e13 bytes (a std::bad_alloc mid-run before)") {
    auto m = execute_on_cpu(two_ops(1e13, 0), spread, cluster("cpu-2"), quick());
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.error().message, Catch::StartsWith("op op0: its output of 9.1 TiB does not fit device 0's memory (8.0 GiB"));
  }
  SECTION("a proxy GEMM of 2e30 FLOPs, whose operands are 1e10 x 1e10") {
    auto m = execute_on_cpu(two_ops(4, 2e30), spread, cluster("cpu-2"), quick());
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.error().message, Catch::StartsWith("op op0: its proxy GEMM operand of "));
  }
  SECTION("a 2^40-wide chain of matrix products (LibTorch's overflow and its backtrace before)") {
    const Graph g = workload("chainmm:size=1099511627776");
    auto m = execute_on_cpu(g, Placement{std::vector<std::int32_t>(g.size(), 0), {}}, cluster("cpu-2"), quick());
    REQUIRE_FALSE(m.ok());
    CHECK_THAT(m.error().message, Catch::Contains("does not fit device 0's memory"));
  }
  SECTION("a device gets an operand's slice: a 70000-wide chain in 8 row blocks fits 8 GiB devices") {
    const Graph g = workload("chainmm:size=70000,blocks=8");  // whole matrices 18.3 GiB, a block 2.3 GiB
    CHECK(check_tensors_fit(g, Placement{std::vector<std::int32_t>(g.size(), 0), {}}, cluster("cpu-2")).ok());
  }
  SECTION("what fits runs") {
    CHECK(execute_on_cpu(two_ops(4096, 2e6), spread, cluster("cpu-2"), quick()).ok());
  }
}
