#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/simulator.hpp"
#include "sim/timeline_export.hpp"
#include "sim_fixtures.hpp"

using namespace gantry;
using gantry::testing::op;
using gantry::testing::unit_cluster;

TEST_CASE("Chrome trace and SVG show every op and transfer", "[sim]") {
  GraphBuilder b("export");
  b.add_op(op("a<1>", 1));
  b.add_op(op("b", 2));
  b.add_edge(0, 1, 1);
  Graph g = b.build().value();
  Cluster c = unit_cluster(2);
  CostTable costs(g, c);
  SimOptions options;
  options.record = true;
  SimResult r = Simulator(g, costs, c, options).run(Placement{{0, 1}, {}});
  TimelineLabels labels;
  labels.title = "test";
  labels.device_names = {"d0", "d1"};
  auto trace = nlohmann::json::parse(chrome_trace_json(g, r, labels));
  int spans = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") ++spans;
  CHECK(spans == 3);  // two ops and one transfer
  CHECK(trace["otherData"]["makespan"] == 4.0);
  const std::string svg = svg_gantt(g, r, labels);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("a&lt;1&gt;") != std::string::npos);  // names are escaped
  CHECK(svg.find("</svg>") != std::string::npos);
}
