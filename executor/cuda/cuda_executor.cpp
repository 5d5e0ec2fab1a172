#include "executor/cuda/cuda_executor.hpp"

#ifdef GANTRY_WITH_CUDA

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <thread>

#include "executor/placed_run.hpp"
#include "executor/program.hpp"

namespace gantry {

namespace {

using Clock = std::chrono::steady_clock;

// Threads launch on their own stream of their GPU: set once per thread, as ATen's current stream.
void use_own_stream(int gpu) {
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(gpu));
  c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(gpu)));
}

class CudaBackend : public DeviceBackend {
 public:
  CudaBackend(const Graph& graph, const Cluster& cluster, const ExecOptions& options, int gpus)
      : cluster_(cluster), options_(options), gpus_(std::min(gpus, cluster.size())) {
    for (int g = 0; g < gpus_; ++g) {
      programs_.push_back(std::make_unique<Program>(graph, at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(g))));
      base_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
      offset_.push_back(0);
    }
  }

  const char* name() const override { return "cuda"; }
  void enter_device_thread(int device) override { use_own_stream(gpu(device)); }
  void enter_link_thread(int, int to) override { use_own_stream(gpu(to)); }

  // One time base per GPU: an event recorded after the GPU went idle, and when that was on the
  // host relative to GPU 0's (events of different GPUs do not compare directly).
  void begin_run() override {
    Clock::time_point first;
    for (int g = 0; g < gpus_; ++g) {
      const auto index = static_cast<c10::DeviceIndex>(g);
      c10::cuda::set_device(index);
      c10::cuda::device_synchronize();
      base_[static_cast<std::size_t>(g)] = std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault);
      base_[static_cast<std::size_t>(g)]->record(c10::cuda::getCurrentCUDAStream(index));
      base_[static_cast<std::size_t>(g)]->synchronize();
      const Clock::time_point now = Clock::now();
      if (g == 0) first = now;
      offset_[static_cast<std::size_t>(g)] = std::chrono::duration<double>(now - first).count();
    }
  }

  Timed run_op(int device, OpId op, const std::vector<at::Tensor>& inputs) override {
    const int g = gpu(device);
    const auto stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(g));
    at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
    start.record(stream);
    Timed out;
    out.value = programs_[static_cast<std::size_t>(g)]->run(op, inputs);
    end.record(stream);
    end.synchronize();  // finished before its consumers may start: values cross streams safely
    out.start = since_base(g, start);
    out.end = since_base(g, end);
    return out;
  }

  Timed copy(int from, int to, const at::Tensor& value) override {
    const int g = gpu(to);
    const auto stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(g));
    const Clock::time_point begin = Clock::now();
    at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
    start.record(stream);
    Timed out;
    out.value = value.to(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(g)), /*non_blocking=*/true, /*copy=*/true);
    end.record(stream);
    end.synchronize();
    out.start = since_base(g, start);
    out.end = since_base(g, end);
    // Throttled: delivered no sooner than the cluster path's latency + bytes / bandwidth after it began.
    const Link& path = cluster_.link(from, to);
    const double bytes = static_cast<double>(value.numel()) * static_cast<double>(value.element_size());
    if (options_.throttle_links && path.bandwidth > 0) {
      const double least = path.latency + bytes / path.bandwidth;
      std::this_thread::sleep_until(begin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(least)));
      out.end = std::max(out.end, out.start + least);
    }
    return out;
  }

 private:
  int gpu(int device) const { return device % gpus_; }
  double since_base(int g, const at::cuda::CUDAEvent& event) const {
    return offset_[static_cast<std::size_t>(g)] + base_[static_cast<std::size_t>(g)]->elapsed_time(event) / 1e3;
  }

  const Cluster& cluster_;
  const ExecOptions& options_;
  int gpus_;
  std::vector<std::unique_ptr<Program>> programs_;           // per GPU: the graph's tensors there
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> base_;   // per GPU: the run's time base
  std::vector<double> offset_;                               // per GPU: its base after GPU 0's, s
};

}  // namespace

int cuda_device_count() { return static_cast<int>(c10::cuda::device_count()); }

Result<Measurement> execute_on_cuda(const Graph& graph, const Placement& placement, const Cluster& cluster,
                                    const ExecOptions& options) {
  const int gpus = cuda_device_count();
  if (gpus == 0) return make_error("no CUDA device is visible to this process");
  std::unique_ptr<CudaBackend> backend;
  try {
    backend = std::make_unique<CudaBackend>(graph, cluster, options, gpus);
  } catch (const std::exception& e) {
    return make_error(std::string("preparing the graph's tensors on the GPUs: ") + e.what());
  }
  return execute_placed(graph, placement, cluster, options, *backend);
}

}  // namespace gantry

#else  // LibTorch without CUDA: the backend is absent, and says so.

namespace gantry {

int cuda_device_count() { return 0; }

Result<Measurement> execute_on_cuda(const Graph&, const Placement&, const Cluster&, const ExecOptions&) {
  return make_error("this build has no CUDA executor (its LibTorch has no CUDA; build gantry-exec against a CUDA LibTorch)");
}

}  // namespace gantry

#endif
