// A problem costed with measured profiles: the job carries them, its key and its runtime key differ
// from the roofline problem's, workers cost it with them, and they survive the wire.
#include <catch2/catch.hpp>

#include <map>

#include "actors/net/wire.hpp"
#include "actors/problem_spec.hpp"
#include "actors/tune_job.hpp"
#include "core/cluster.hpp"
#include "sim/runtime_fingerprint.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

TEST_CASE("profiles travel with a job and cost its problem", "[actors]") {
  auto graph = make_workload("ffnn:layers=1,blocks=2,batch=8,hidden=8");
  REQUIRE(graph.ok());
  auto cluster = Cluster::load("cpu-2");
  REQUIRE(cluster.ok());
  const Graph& g = graph.value();
  ProfileTable profiles;
  for (OpId op = 0; op < g.size(); ++op) profiles.add("CPU", op_signature(g, op), 1e-3 * (1 + op % 3));
  const SimOptions sim;
  const ProblemSpec plain = make_problem_spec(g, cluster.value(), sim, "ffnn");
  const ProblemSpec profiled = make_problem_spec(g, cluster.value(), sim, "ffnn", "", &profiles);
  CHECK(plain.profiles_json.empty());
  CHECK_FALSE(profiled.profiles_json.empty());
  CHECK(problem_key(plain) != problem_key(profiled));

  const CostTable costs(g, cluster.value());
  TuneOptions options;
  options.budget_seconds = 1;
  JobSpec job = make_job_spec(TuneProblem{g, cluster.value(), costs, sim, "ffnn", "", &profiles}, options);
  auto back = wire::parse_job_spec_text(wire::job_spec_text(job));
  REQUIRE(back.ok());
  CHECK(back.value().problem.profiles_json == profiled.profiles_json);

  auto built = build_problem(back.value().problem);
  REQUIRE(built.ok());
  // Ops of one shape share a signature: each costs the mean of its signature's samples.
  std::map<std::string, std::pair<double, int>> sums;
  for (OpId op = 0; op < g.size(); ++op) {
    auto& [sum, count] = sums[op_signature(g, op).signature];
    sum += 1e-3 * (1 + op % 3);
    ++count;
  }
  for (OpId op = 0; op < g.size(); ++op) {
    const auto& [sum, count] = sums[op_signature(g, op).signature];
    CHECK(built.value()->costs->op_time(op, 0) == Approx(sum / count));
  }
  CHECK(built.value()->runtime == runtime_fingerprint(cluster.value(), sim, &profiles));  // the key execute and query use
  auto roofline = build_problem(plain);
  REQUIRE(roofline.ok());
  CHECK(roofline.value()->runtime == runtime_fingerprint(cluster.value(), sim));
  CHECK(built.value()->runtime != roofline.value()->runtime);  // the profiles are in the key

  ProblemSpec broken = profiled;
  broken.profiles_json = R"({"entries": [{"kind": "CPU"}]})";
  auto refused = build_problem(broken);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("the job's profiles: $.entries[0]"));
}
