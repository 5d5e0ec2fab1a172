#include "executor/cpu/cpu_executor.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

#include <ATen/Parallel.h>
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "executor/cpu/device_arena.hpp"
#include "executor/placed_run.hpp"
#include "executor/program.hpp"

namespace gantry {

namespace {

using Clock = std::chrono::steady_clock;

// One intra-op thread per device: ATen's OpenMP pool is per calling thread, but a threaded BLAS
// keeps one pool for the process (and OpenBLAS serialises concurrent callers while it has more
// than one thread), so it is set to one thread once, found at run time whichever BLAS is loaded.
void single_threaded_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    using SetThreads = void (*)(int);
    for (const char* symbol : {"openblas_set_num_threads", "goto_set_num_threads", "bli_thread_set_num_threads"})
      if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, symbol))) set(1);
  });
  at::set_num_threads(1);
}

// A copy of `value` in `device`'s arena, made on this thread (a link thread, or the source device's
// own thread when it has no copy engine), which then allocates from its previous arena again.
at::Tensor clone_into(int device, const at::Tensor& value) {
  const ScopedDeviceArena destination(device);
  return value.clone();
}

void pin_to_core(int core) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<int>(static_cast<unsigned>(core) % cores), &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort: a refusal is not an error
}

// Devices are threads of this process, each allocating from its own arena (device_arena.hpp); a
// copy is a clone into the destination's arena; the clock is the host's steady clock.
class CpuBackend : public DeviceBackend {
 public:
  CpuBackend(const Program& program, const Cluster& cluster, const ExecOptions& options)
      : program_(program), cluster_(cluster), options_(options) {}

  const char* name() const override { return "cpu"; }
  void enter_device_thread(int device, int) override {
    single_threaded_kernels();
    if (options_.pin_threads) pin_to_core(device);
    use_device_arena(device);
  }
  void enter_link_thread(int, int) override {}  // copy() allocates in the destination's arena itself
  void begin_run() override { start_ = Clock::now(); }

  Timed run_op(int, OpId op, const std::vector<at::Tensor>& inputs) override {
    Timed out;
    out.start = now();
    out.value = program_.run(op, inputs);
    out.end = now();
    return out;
  }

  // Throttled: the copy lasts at least the cluster path's latency + bytes / bandwidth.
  Timed copy(int from, int to, const at::Tensor& value) override {
    const Clock::time_point begin = Clock::now();
    Timed out;
    out.start = seconds(begin);
    out.value = clone_into(to, value);
    const Link& path = cluster_.link(from, to);
    const double bytes = static_cast<double>(value.numel()) * static_cast<double>(value.element_size());
    if (options_.throttle_links && path.bandwidth > 0)
      std::this_thread::sleep_until(begin + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(path.latency + bytes / path.bandwidth)));
    out.end = now();
    return out;
  }

 private:
  double seconds(Clock::time_point t) const { return std::chrono::duration<double>(t - start_).count(); }
  double now() const { return seconds(Clock::now()); }

  const Program& program_;
  const Cluster& cluster_;
  const ExecOptions& options_;
  Clock::time_point start_;
};

}  // namespace

bool is_cpu_cluster(const Cluster& cluster) {
  for (int d = 0; d < cluster.size(); ++d)
    if (cluster.device(d).kind != "CPU") return false;
  return true;
}

Status check_cpu_cluster(const Cluster& cluster) {
  for (int d = 0; d < cluster.size(); ++d)
    if (cluster.device(d).kind != "CPU")
      return make_error("cluster " + cluster.name() + ": device " + std::to_string(d) + " (kind " + cluster.device(d).kind +
                        ") is not a CPU core: this runs the CPU backend on this machine's cores, whose times would be "
                        "recorded as that kind's; give a CPU cluster such as cpu-2, or measure a GPU cluster on a worker "
                        "started with --devices cuda:all (--coordinator)");
  return Ok{};
}

Result<Measurement> execute_on_cpu(const Graph& graph, const Placement& placement, const Cluster& cluster,
                                   const ExecOptions& options) {
  if (Status ok = check_placed_run(graph, placement, cluster, options); !ok) return ok.error();  // before building tensors
  std::unique_ptr<Program> program;
  try {
    program = std::make_unique<Program>(graph);
  } catch (const std::exception& e) {
    return make_error(std::string("preparing the graph's tensors: ") + e.what());
  }
  CpuBackend backend(*program, cluster, options);
  return execute_placed(graph, placement, cluster, options, backend);
}

}  // namespace gantry
