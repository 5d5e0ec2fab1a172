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

TEST_CASE("stage costs follow placement: device speed, the link between the devices", "[workloads][pipeline]") {
  auto layers = model_layers("llama-3-8b");
  REQUIRE(layers.ok());
  Cluster mixed = Cluster::load("4xH100+4xA100-ib").value();  // devices 0-3 H100, 4-7 A100
  const int n = static_cast<int>(layers.value().size());
  const std::vector<std::pair<int, int>> partition = {{0, n / 2}, {n / 2, n}};
  const StageCosts on_h100 = stage_costs(layers.value(), partition, {0, 1}, mixed);
  const StageCosts on_a100 = stage_costs(layers.value(), partition, {0, 4}, mixed);
  // FLOP-based times scale with the peak: 989 / 312 TFLOP/s.
  CHECK(on_a100.f[1] / on_h100.f[1] == Approx(989.0 / 312.0));
  CHECK(on_a100.w[1] / on_h100.w[1] == Approx(989.0 / 312.0));
  CHECK(on_a100.f[0] == on_h100.f[0]);
  // The hand-off crosses hosts: InfiniBand (50 GB/s, 5 us) instead of NVLink (450 GB/s, 3 us).
  const double bytes = layers.value()[n / 2 - 1].output_bytes;
  CHECK(on_h100.comm[0] == Approx(3e-6 + bytes / 450e9));
  CHECK(on_a100.comm[0] == Approx(5e-6 + bytes / 50e9));

  // A profile measured on H100s: an A100 stage takes the measured times scaled by the peaks.
  PipelineModelOptions measured;
  for (int i = 0; i < n; ++i) measured.measured.push_back({1e-3, 2e-3, 0.5e-3});
  measured.measured_kind = "H100";
  measured.measured_peak_flops = 989e12;
  const StageCosts h = stage_costs(layers.value(), partition, {0, 1}, mixed, measured);
  const StageCosts a = stage_costs(layers.value(), partition, {0, 4}, mixed, measured);
  CHECK(h.f[1] == Approx((n - n / 2) * 1e-3));
  CHECK(a.f[1] == Approx((n - n / 2) * 1e-3 * 989.0 / 312.0));
  CHECK(a.b[0] == h.b[0]);
}
