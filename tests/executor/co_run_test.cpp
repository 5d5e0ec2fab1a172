// Measuring the co-run slowdown: how much of each op ran beside another device of its host, the
// factor fitted from times measured alone and beside others, and samples kept as solo times.
// Expected values are worked out by hand or generated from a known factor.
#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "executor/co_run.hpp"
#include "executor/profile_samples.hpp"

using namespace gantry;

TEST_CASE("an op's co-run share is the part of it another device of its host ran beside it", "[executor]") {
  auto cluster = Cluster::load("cpu-2");
  REQUIRE(cluster.ok());
  RunRecord run;
  // Device 0 runs a [0, 2) and c [4, 5); device 1 runs b [1, 4) and d [4.5, 6).
  run.ops = {{0, 0, 0.0, 2.0}, {1, 1, 1.0, 4.0}, {2, 0, 4.0, 5.0}, {3, 1, 4.5, 6.0}};
  const std::vector<double> shares = co_run_shares(run, cluster.value());
  REQUIRE(shares.size() == 4);
  CHECK(shares[0] == Approx(1.0 / 2));  // [1, 2) of [0, 2)
  CHECK(shares[1] == Approx(1.0 / 3));  // [1, 2) of [1, 4)
  CHECK(shares[2] == Approx(0.5));      // [4.5, 5) of [4, 5)
  CHECK(shares[3] == Approx(0.5 / 1.5));

  // Devices of different hosts do not share: device 0 and device 8 of two 8-GPU hosts.
  auto hosts = Cluster::load("2x8xH100-ib");
  REQUIRE(hosts.ok());
  REQUIRE(hosts.value().device(0).host != hosts.value().device(8).host);
  RunRecord apart;
  apart.ops = {{0, 0, 0.0, 2.0}, {1, 8, 0.0, 2.0}, {2, 1, 1.0, 3.0}};
  const std::vector<double> across = co_run_shares(apart, hosts.value());
  CHECK(across[0] == Approx(0.5));  // beside op 2 on device 1 for [1, 2)
  CHECK(across[1] == Approx(0.0));
  CHECK(across[2] == Approx(0.5));
}

TEST_CASE("an op's co-run share counts each other device of its host that ran beside it", "[executor]") {
  // Four devices of one host: a [0, 2) on device 0; b [0, 2) on 1; c [1, 2) on 2; d [0, 1) and
  // e [1, 2) on 3 (one device: busy [0, 2)).
  std::vector<Device> devices(4);
  for (int d = 0; d < 4; ++d) devices[static_cast<std::size_t>(d)].name = "p" + std::to_string(d);
  const Cluster gpu("one-gpu", devices);
  RunRecord run;
  run.ops = {{0, 0, 0.0, 2.0}, {1, 1, 0.0, 2.0}, {2, 2, 1.0, 2.0}, {3, 3, 0.0, 1.0}, {4, 3, 1.0, 2.0}};
  const std::vector<double> shares = co_run_shares(run, gpu);
  CHECK(shares[0] == Approx(1 + 0.5 + 1));  // b all of it, c half, device 3 all of it
  CHECK(shares[2] == Approx(3.0));          // devices 0, 1 and 3 all of [1, 2)
  CHECK(shares[3] == Approx(2.0));          // a and b over [0, 1); c not yet
}

TEST_CASE("the co-run slowdown is fitted per busy neighbour from ops beside several devices", "[executor]") {
  // A GPU's four partitions: GEMMs measured alone and beside three busy partitions, generated from
  // solo times 1 and 2 and a factor of 1.8 per neighbour: seconds = solo x (1 + 0.8 x neighbours).
  std::vector<CoRunSample> samples;
  for (double neighbours : {0.0, 0.0, 3.0, 3.0, 2.5}) {
    samples.push_back({"H200", "gemm-a", 1.0 * (1 + 0.8 * neighbours), neighbours});
    samples.push_back({"H200", "gemm-b", 2.0 * (1 + 0.8 * neighbours), neighbours});
  }
  const auto fits = fit_co_run_slowdowns(samples);
  REQUIRE(fits.count("H200") == 1);
  CHECK(fits.at("H200") == Approx(1.8).margin(1e-3));
}

TEST_CASE("the co-run slowdown is fitted from ops measured alone and beside others", "[executor]") {
  // Samples generated from solo times 1 and 2 and a factor of 1.3: seconds = solo x (1 + 0.3 share).
  std::vector<CoRunSample> samples;
  for (double share : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    samples.push_back({"CPU", "gemm-a", 1.0 * (1 + 0.3 * share), share});
    samples.push_back({"CPU", "gemm-b", 2.0 * (1 + 0.3 * share), share});
  }
  // A kind only ever measured beside others cannot tell its factor from its solo times.
  samples.push_back({"GPU", "gemm-a", 1.0, 1.0});
  samples.push_back({"GPU", "gemm-a", 1.1, 0.9});
  const auto fits = fit_co_run_slowdowns(samples);
  REQUIRE(fits.count("CPU") == 1);
  CHECK(fits.at("CPU") == Approx(1.3).epsilon(1e-4));
  CHECK(fits.count("GPU") == 0);
}

TEST_CASE("with a co-run slowdown, profile samples are solo times", "[executor]") {
  GraphBuilder builder("g");
  for (const char* name : {"a", "b"}) {
    OpSpec op;
    op.name = name;
    op.flops = 1e6;
    op.output_bytes = 400;
    builder.add_op(op);
  }
  auto g = builder.build();
  REQUIRE(g.ok());
  auto cluster = Cluster::load("cpu-2");
  REQUIRE(cluster.ok());
  RunRecord run;
  run.ops = {{0, 0, 0.0, 2.0}, {1, 1, 1.0, 2.0}};  // a half beside b, b wholly beside a
  ProfileTable samples;
  add_profile_samples(g.value(), cluster.value(), run, &samples, {1.5, 1.5});
  // a: 2 / (1 + 0.5 x 0.5) = 1.6; b: 1 / (1 + 0.5 x 1) = 2/3; one signature, their mean.
  CHECK(*samples.op_time("CPU", op_signature(g.value(), 0)) == Approx((1.6 + 2.0 / 3) / 2));
  ProfileTable raw;
  add_profile_samples(g.value(), cluster.value(), run, &raw);
  CHECK(*raw.op_time("CPU", op_signature(g.value(), 0)) == Approx((2.0 + 1.0) / 2));
}
