// The canary of kModelVersion: makespans of fixed problems, pinned under the current version. A
// change that moves any of them changes what stored results mean, so it must bump kModelVersion
// (sim/model_version.hpp) and pin the new values here in the same commit; stored bests of the old
// version then show as stale and `gantry db resimulate` recomputes them.
#include <catch2/catch.hpp>

#include <iomanip>

#include "core/graph_io.hpp"
#include "core/profile_table.hpp"
#include "sim/model_version.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "sim/simulator.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

namespace {

struct Pinned {
  const char* graph;    // a workload spec, or a file under tests/data
  const char* cluster;
  SimOptions options;
  double makespan;      // under kModelVersion, placement op i -> device i % devices
  double peak_memory0;  // device 0, when the options track memory (else 0)
  double co_run = 0;    // the co-run slowdown of the cluster's first device kind (0: no profiles)
};

SimOptions with(Dispatch dispatch, LinkModel links, bool doppler, int streams, bool memory, double noise = 0) {
  SimOptions o;
  o.dispatch = dispatch;
  o.links = links;
  o.doppler = doppler;
  o.streams = streams;
  o.track_memory = memory;
  o.noise_sigma = noise;
  o.seed = 5;
  return o;
}

Graph load(const std::string& spec) {
  if (spec.find('/') != std::string::npos) return read_graph_file(std::string(GANTRY_TEST_DATA) + "/" + spec).value();
  return make_workload(spec, 3).value();
}

}  // namespace

TEST_CASE("stored simulator options give back the key they were stored under", "[sim]") {
  const Cluster c = Cluster::load("4xP100-pcie").value();
  SimOptions noisy = with(Dispatch::priority, LinkModel::unlimited, false, 3, false, 0.2);
  noisy.noise_samples = 8;
  const SimOptions doppler = with(Dispatch::fifo, LinkModel::contention, true, 0, false);
  for (const SimOptions& o : {noisy, doppler, SimOptions{}}) {
    auto back = sim_options_from_json(sim_options_json(o));
    REQUIRE(back.ok());
    CHECK(runtime_fingerprint(c, back.value()) == runtime_fingerprint(c, o));
  }
  SimOptions fewer = noisy;
  fewer.noise_samples = 1;  // a different estimator of the expected makespan: another key
  CHECK(runtime_fingerprint(c, fewer) != runtime_fingerprint(c, noisy));
}

TEST_CASE("stored simulator options are read as the flags read them: unknown keys and values out of their ranges refused", "[sim]") {
  const auto refusal = [](const std::string& text) {
    auto o = sim_options_from_json(text);
    return o.ok() ? std::string("accepted") : o.error().message;
  };
  CHECK(refusal(R"({"sim": "doppler", "streams": 1024, "noise": 3, "noise_samples": 10000})") == "accepted");
  // A field the simulator does not know (a megabyte of it went into the problem's key and the stored spec).
  CHECK_THAT(refusal(R"({"sim": "default", "x": [[[1]]]})"), Catch::StartsWith("simulator options: unknown key \"x\""));
  CHECK(refusal(R"({"streams": 1025})") == "simulator options: streams: must be 0 to 1024");
  CHECK(refusal(R"({"noise": 3.5})") == "simulator options: noise: must be 0 to 3");
  CHECK(refusal(R"({"noise_samples": 0})") == "simulator options: noise_samples: must be 1 to 10000");
  CHECK(refusal(R"({"noise_samples": 10001})") == "simulator options: noise_samples: must be 1 to 10000");
  CHECK_THAT(refusal(R"({"streams": "four"})"), Catch::StartsWith("simulator options: type must be number"));
  CHECK_THAT(refusal("[1, 2]"), Catch::StartsWith("simulator options: not a JSON object"));
}

TEST_CASE("pinned makespans of this model version", "[sim]") {
  REQUIRE(kModelVersion == 3);  // a bump comes with the new pinned values below (3 moved none of them: no co-run)
  const Dispatch fifo = Dispatch::fifo, prio = Dispatch::priority;
  const LinkModel shared = LinkModel::contention, free = LinkModel::unlimited;
  const Pinned pinned[] = {
      {"llama-layer", "4xP100-pcie", with(fifo, shared, false, 0, true), 0.02956751884487523, 37748736},
      {"llama-block", "8xV100-nvlink", with(fifo, shared, false, 0, false), 0.0031233750895339673, 0},
      {"random:ops=400,ccr=4", "2x8xH100-ib", with(fifo, shared, false, 0, true), 0.090585517410645522, 796106333.5296433},
      {"random:ops=400,ccr=4", "2x8xH100-ib", with(prio, free, false, 2, false), 0.019905257337584626, 0},
      {"chainmm", "8xH100-nvswitch", with(fifo, shared, false, 3, false, 0.3), 0.0033886494818081607, 0},
      {"doppler/ffnn_192nodes.txt", "identical:8", with(fifo, shared, true, 0, false), 558356299776, 0},
      {"chainmm", "8xH100-nvswitch", with(fifo, shared, false, 0, false), 0.0043140066649666586, 0, 1.5},
  };
  for (const Pinned& p : pinned) {
    const Graph g = load(p.graph);
    const Cluster c = Cluster::load(p.cluster).value();
    ProfileTable profiles;
    if (p.co_run > 0) profiles.add_co_run_slowdown(c.device(0).kind, p.co_run);
    const CostTable costs(g, c, p.co_run > 0 ? &profiles : nullptr);
    Placement placement;
    for (OpId op = 0; op < g.size(); ++op) placement.device.push_back(op % c.size());
    if (p.options.dispatch == Dispatch::priority)
      for (OpId op = 0; op < g.size(); ++op) placement.priority.push_back(static_cast<double>((op * 7919) % 101));
    const SimResult r = Simulator(g, costs, c, p.options).run(placement);
    INFO(p.graph << " on " << p.cluster << ": " << std::setprecision(17) << r.makespan);  // the value to pin
    CHECK(r.makespan == p.makespan);
    CHECK((p.options.track_memory ? r.peak_memory[0] : 0.0) == p.peak_memory0);
  }
}
