#pragma once
// The tuning problem the actor tests share: DOPPLER's FFNN graph on 4 identical devices under the
// DOPPLER-compatible runtime, and job options that make a job reproducible bit for bit (CAF's test
// scheduler, evaluation budgets, fixed seed).
#include <string>

#include "actors/tune_job.hpp"
#include "core/graph_io.hpp"
#include "sim/simulator.hpp"

namespace gantry::testing {

struct TuneFixture {
  Graph graph = read_graph_file(std::string(GANTRY_TEST_DATA) + "/doppler/ffnn_192nodes.txt").value();
  Cluster cluster = Cluster::identical(4).value();
  CostTable costs{graph, cluster};
  SimOptions sim = [] {
    SimOptions o;
    o.doppler = true;
    return o;
  }();
  TuneProblem problem() const { return TuneProblem{graph, cluster, costs, sim, "ffnn", graph_to_json(graph)}; }
  double simulate(const Placement& p) const { return Simulator(graph, costs, cluster, sim).makespan(p); }
};

inline TuneOptions deterministic_options(const std::string& dir, long evaluations = 3000) {
  TuneOptions o;
  o.data_dir = dir;
  o.rollouts = 2;
  o.budget_seconds = 0;
  o.budget_evaluations = evaluations;
  o.batch_evaluations = 250;
  o.seed = 11;
  o.deterministic = true;
  return o;
}

}  // namespace gantry::testing
