// The CPU backend's per-device arenas: a thread with an arena allocates from it and reuses freed
// blocks; a thread without one is not served by any arena; a block freed on another thread goes
// back to the arena it came from; a run allocates from its devices' arenas.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <thread>

#include "core/cluster.hpp"
#include "executor/cpu/cpu_executor.hpp"
#include "executor/cpu/device_arena.hpp"
#include "workloads/workload.hpp"

using namespace gantry;

namespace {

// Device indices of their own, so other tests' runs do not move these arenas' counts.
constexpr int kDevice = 900, kOther = 901;

}  // namespace

TEST_CASE("a device thread's tensors come from its arena, and a freed block is reused", "[executor]") {
  std::thread([] {
    use_device_arena(kDevice);
    const ArenaStats before = device_arena_stats(kDevice);
    const void* first = nullptr;
    {
      at::Tensor t = at::ones({1000, 10});
      first = t.data_ptr();
      CHECK(t.sum().item<double>() == 10000);
    }
    at::Tensor again = at::empty({1000, 10});
    CHECK(again.data_ptr() == first);  // the same block, from the arena's free list
    const ArenaStats after = device_arena_stats(kDevice);
    CHECK(after.reused >= before.reused + 1);
    CHECK(after.allocations >= before.allocations + 2);
    use_device_arena(-1);
    const ArenaStats mid = device_arena_stats(kDevice);
    at::Tensor plain = at::empty({1000, 10});
    CHECK(device_arena_stats(kDevice).allocations == mid.allocations);  // no arena, no count
  }).join();
}

TEST_CASE("a block freed on another thread returns to the arena it came from", "[executor]") {
  at::Tensor made;
  std::thread([&] {
    use_device_arena(kOther);
    made = at::zeros({256, 256});
  }).join();
  const ArenaStats before = device_arena_stats(kOther);
  made.reset();  // freed here, on a thread without an arena
  const ArenaStats after = device_arena_stats(kOther);
  CHECK(after.cached_bytes == before.cached_bytes + 256 * 256 * 4);  // 256 KiB: whole pages already
}

TEST_CASE("a run on two CPU devices allocates from both devices' arenas", "[executor]") {
  auto graph = make_workload("ffnn:layers=2,blocks=2,batch=64,hidden=64");
  REQUIRE(graph.ok());
  auto cluster = Cluster::load("cpu-2");
  REQUIRE(cluster.ok());
  Placement placement;
  for (OpId op = 0; op < graph.value().size(); ++op) placement.device.push_back(op % 2);
  const ArenaStats zero = device_arena_stats(0), one = device_arena_stats(1);
  ExecOptions options;
  options.repeats = 2;
  options.warmup = 1;
  REQUIRE(execute_on_cpu(graph.value(), placement, cluster.value(), options).ok());
  CHECK(device_arena_stats(0).allocations > zero.allocations);
  CHECK(device_arena_stats(1).allocations > one.allocations);
  CHECK(device_arena_stats(0).reused > zero.reused);  // the timed runs reuse the warm-up's blocks
}

TEST_CASE("a transfer is copied into the destination device's arena", "[executor]") {
  // One tensor of a size no other test uses, made on device 0 and read on device 1: the only
  // block of that size device 1's arena can hold is the copy.
  constexpr double kBytes = 3 * 1024 * 1024 + 8192;
  auto graph = make_workload("link-ladder:min_bytes=3153920,max_bytes=3153920");
  REQUIRE(graph.ok());
  REQUIRE(graph.value().size() == 2);
  auto cluster = Cluster::load("cpu-2");
  REQUIRE(cluster.ok());
  Placement placement;
  for (OpId op = 0; op < graph.value().size(); ++op) placement.device.push_back(graph.value().in_edges(op).empty() ? 0 : 1);
  const ArenaStats before = device_arena_stats(1);
  ExecOptions options;
  options.repeats = 1;
  options.warmup = 0;
  REQUIRE(execute_on_cpu(graph.value(), placement, cluster.value(), options).ok());
  CHECK(device_arena_stats(1).cached_bytes >= before.cached_bytes + static_cast<std::size_t>(kBytes));
}
