#include <catch2/catch.hpp>

#include "workloads/pipeline_stages.hpp"

using namespace gantry;

TEST_CASE("stage costs from a model add up its layers", "[workloads][pipeline]") {
  auto layers = model_layers("llama-3-8b");
  REQUIRE(layers.ok());
  Cluster cluster = Cluster::load("8xH100-nvswitch").value();
  const int n = static_cast<int>(layers.value().size());
  std::vector<std::pair<int, int>> partition = {{0, n / 2}, {n / 2, n}};
  StageCosts c = stage_costs(layers.value(), partition, {0, 1}, cluster);
  REQUIRE(c.check("llama").ok());
  double params = 0, act = 0;
  for (const LayerCost& l : layers.value()) {
    params += l.params;
    act += l.activation_bytes;
  }
  CHECK(c.static_memory[0] + c.static_memory[1] == Approx(params * 18));
  CHECK(c.mem_f[0] + c.mem_f[1] == Approx(act));
  for (int s = 0; s < 2; ++s) CHECK(c.mem_f[s] + c.mem_b[s] + c.mem_w[s] == Approx(0).margin(1e-3));
  const double bytes = layers.value()[n / 2 - 1].output_bytes;
  CHECK(c.comm[0] == Approx(3e-6 + bytes / 450e9));
  CHECK(c.comm[1] == 0);
  const std::vector<double> times = layer_times(layers.value(), cluster.device(0));
  double total = 0;
  for (double t : times) total += t;
  CHECK(c.f[0] + c.b[0] + c.w[0] + c.f[1] + c.b[1] + c.w[1] == Approx(total));
  CHECK(c.max_mem.size() == 8);
}
