#include "executor/cuda/cuda_executor.hpp"

#ifdef GANTRY_WITH_CUDA

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "executor/cuda/green_partitions.hpp"
#include "executor/placed_run.hpp"
#include "executor/program.hpp"

// Newer LibTorch keeps CUDAEvent in c10 (moved there from ATen in 2026, the same class).
#if __has_include(<c10/cuda/CUDAEvent.h>)
#include <c10/cuda/CUDAEvent.h>
#define GANTRY_CUDA_EVENT c10::cuda::CUDAEvent
#else
#include <ATen/cuda/CUDAEvent.h>
#define GANTRY_CUDA_EVENT at::cuda::CUDAEvent
#endif

namespace gantry {

namespace {

using CudaEvent = GANTRY_CUDA_EVENT;

using Clock = std::chrono::steady_clock;

// A thread's place on a GPU: its stream and the events it times its work with. Made once per
// (device, stream slot) and per link, and kept across runs: the caching allocator keeps its
// blocks per stream and cuBLAS its workspace per stream, so warm-up runs warm what the timed runs
// use, and no event is created while work is being timed.
struct Lane {
  Lane(int gpu, c10::cuda::CUDAStream stream) : gpu(gpu), stream(stream) {}
  int gpu;
  c10::cuda::CUDAStream stream;
  CudaEvent start{cudaEventDefault}, end{cudaEventDefault};
  std::optional<c10::cuda::CUDAStream> source;  // a link between two GPUs: its stream on the source GPU
  // A device on an SM partition: the partition's context, current on the device's thread, and
  // the lane's own time base (events of different contexts are not compared), recorded when the
  // thread starts a run, with the host's time of it.
  CUcontext context = nullptr;
  CudaEvent base{cudaEventDefault};
  Clock::time_point base_host;
};

thread_local Lane* current_lane = nullptr;  // this thread's lane in the current run

c10::cuda::CUDAStream pool_stream(int gpu) {
  return c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(gpu));
}

class CudaBackend : public DeviceBackend {
 public:
  CudaBackend(const Graph& graph, const Cluster& cluster, const ExecOptions& options, int gpus)
      : cluster_(cluster), options_(options), gpus_(std::min(gpus, cluster.size())) {
    for (int g = 0; g < gpus_; ++g) {
      programs_.push_back(std::make_unique<Program>(graph, at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(g))));
      base_.push_back(std::make_unique<CudaEvent>(cudaEventDefault));
      offset_.push_back(0);
      partitions_.emplace_back();
      if (options.sm_partitions && devices_on(g) > 1) {
        partitions_.back() = std::make_unique<GreenPartitions>(g, devices_on(g));
        for (int part = 0; part < devices_on(g); ++part) try_partition(g, part);
      }
    }
  }

  // The partitions' memory goes back before their contexts: lanes (their events), then the
  // allocator's cached blocks, then the contexts (members are destroyed after this body).
  ~CudaBackend() override {
    if (std::none_of(partitions_.begin(), partitions_.end(), [](const auto& p) { return p != nullptr; })) return;
    device_lanes_.clear();
    link_lanes_.clear();
    c10::cuda::CUDACachingAllocator::emptyCache();
  }

  const char* name() const override { return "cuda"; }

  std::string layout() const override {
    std::string text;
    for (int g = 0; g < gpus_; ++g) {
      text += (g ? "; " : "") + std::to_string(devices_on(g)) + " device(s) on GPU " + std::to_string(g);
      const GreenPartitions* parts = partitions_[static_cast<std::size_t>(g)].get();
      if (!parts) {
        text += devices_on(g) > 1 ? ", sharing its SMs (streams)" : "";
        continue;
      }
      text += ", SM partitions of";
      for (int part = 0; part < parts->size(); ++part) text += (part ? ", " : " ") + std::to_string(parts->sms(part));
      text += " of its " + std::to_string(parts->gpu_sms()) + " SMs";
    }
    return text;
  }

  void enter_device_thread(int device, int slot) override {
    Lane& l = device_lane(device, slot);
    c10::cuda::set_device(static_cast<c10::DeviceIndex>(l.gpu));
    if (l.context) make_current(l.context);
    c10::cuda::setCurrentCUDAStream(l.stream);
    if (l.context) {
      l.base.record(l.stream);
      l.base.synchronize();
      l.base_host = Clock::now();
    }
    current_lane = &l;
  }

  // ATen copies between GPUs on the source GPU's current stream (the destination's waits for it):
  // each link has its own stream on both.
  void enter_link_thread(int from, int to) override {
    Lane& l = lane(link_lanes_, {from, to}, gpu(to));
    if (gpu(from) != l.gpu) {
      if (!l.source) l.source = pool_stream(gpu(from));
      c10::cuda::setCurrentCUDAStream(*l.source);
    }
    c10::cuda::set_device(static_cast<c10::DeviceIndex>(l.gpu));
    c10::cuda::setCurrentCUDAStream(l.stream);
    current_lane = &l;
  }

  // One time base per GPU: an event recorded after the GPU went idle, and when that was on the
  // host relative to GPU 0's (events of different GPUs do not compare directly).
  void begin_run() override {
    for (int g = 0; g < gpus_; ++g) {
      const auto index = static_cast<c10::DeviceIndex>(g);
      c10::cuda::set_device(index);
      c10::cuda::device_synchronize();
      CudaEvent& base = *base_[static_cast<std::size_t>(g)];
      base.record(c10::cuda::getCurrentCUDAStream(index));
      base.synchronize();
      const Clock::time_point now = Clock::now();
      if (g == 0) run_base_host_ = now;
      offset_[static_cast<std::size_t>(g)] = seconds(now - run_base_host_);
    }
  }

  Timed run_op(int, OpId op, const std::vector<at::Tensor>& inputs) override {
    Lane& l = *current_lane;
    l.start.record(l.stream);
    Timed out;
    out.value = programs_[static_cast<std::size_t>(l.gpu)]->run(op, inputs);
    l.end.record(l.stream);
    l.end.synchronize();  // finished before its consumers may start: values cross streams safely
    // On a partition: still its context (had a kernel made the GPU's own current again, the ops
    // after it would run on every SM).
    if (l.context && !is_current(l.context))
      throw std::runtime_error("another context than its SM partition's became current on the device's thread");
    out.start = since_base(l, l.start);
    out.end = since_base(l, l.end);
    return out;
  }

  Timed copy(int from, int to, const at::Tensor& value) override {
    Lane& l = *current_lane;
    const Clock::time_point begin = Clock::now();
    l.start.record(l.stream);
    Timed out;
    out.value = value.to(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(l.gpu)), /*non_blocking=*/true, /*copy=*/true);
    l.end.record(l.stream);
    l.end.synchronize();
    out.start = since_base(l, l.start);
    out.end = since_base(l, l.end);
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
  using Lanes = std::map<std::pair<int, int>, std::unique_ptr<Lane>>;

  static double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
  int gpu(int device) const { return device % gpus_; }
  int devices_on(int g) const { return (cluster_.size() - g + gpus_ - 1) / gpus_; }  // devices d with d mod gpus_ == g
  double since_base(const Lane& l, const CudaEvent& event) const {
    if (l.context) return seconds(l.base_host - run_base_host_) + l.base.elapsed_time(event) / 1e3;
    return offset_[static_cast<std::size_t>(l.gpu)] + base_[static_cast<std::size_t>(l.gpu)]->elapsed_time(event) / 1e3;
  }
  // The lane of `key`, made on its first use (a pool stream of `gpu`, or `make`'s).
  Lane& lane(Lanes& lanes, std::pair<int, int> key, int gpu, const std::function<std::unique_ptr<Lane>()>& make = {}) {
    std::lock_guard<std::mutex> lock(lanes_mutex_);
    std::unique_ptr<Lane>& l = lanes[key];
    if (!l) l = make ? make() : std::make_unique<Lane>(gpu, pool_stream(gpu));
    return *l;
  }
  // Device d is partition d / gpus_ of its GPU, when that GPU is partitioned.
  Lane& device_lane(int device, int slot) {
    const int g = gpu(device);
    const GreenPartitions* parts = partitions_[static_cast<std::size_t>(g)].get();
    if (!parts) return lane(device_lanes_, {device, slot}, g);
    return lane(device_lanes_, {device, slot}, g, [&] {
      const int part = device / gpus_;
      auto l = std::make_unique<Lane>(g, c10::cuda::getStreamFromExternal(parts->stream(part), static_cast<c10::DeviceIndex>(g)));
      l->context = parts->context(part);
      return l;
    });
  }

  // A matrix product in one partition, on a thread with its context current, before anything is
  // timed: a driver or LibTorch that cannot launch there fails here, with the partition named, and
  // one that makes the whole GPU's context current again (its kernels would use every SM) is caught.
  void try_partition(int g, int part) const {
    const GreenPartitions& parts = *partitions_[static_cast<std::size_t>(g)];
    const auto index = static_cast<c10::DeviceIndex>(g);
    std::exception_ptr failure;
    std::thread([&] {
      try {
        c10::cuda::set_device(index);
        make_current(parts.context(part));
        c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromExternal(parts.stream(part), index));
        const at::Tensor ones = at::ones({64, 64}, at::TensorOptions(at::kFloat).device(at::kCUDA, index));
        const double corner = at::mm(ones, ones)[0][0].item<double>();
        if (corner != 64) throw std::runtime_error("a product of ones gave " + std::to_string(corner) + ", not 64");
        if (!is_current(parts.context(part)))
          throw std::runtime_error("LibTorch made another context current on the partition's thread (its kernels "
                                   "would run on every SM)");
      } catch (...) {
        failure = std::current_exception();
      }
    }).join();
    if (!failure) return;
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      throw std::runtime_error("SM partition " + std::to_string(part) + " of GPU " + std::to_string(g) + " (" +
                               std::to_string(parts.sms(part)) + " SMs): " + e.what());
    }
  }

  const Cluster& cluster_;
  const ExecOptions& options_;
  int gpus_;
  std::vector<std::unique_ptr<Program>> programs_;           // per GPU: the graph's tensors there
  std::vector<std::unique_ptr<CudaEvent>> base_;   // per GPU: the run's time base
  std::vector<double> offset_;                               // per GPU: its base after GPU 0's, s
  Clock::time_point run_base_host_;                          // when GPU 0's base was, on the host
  std::vector<std::unique_ptr<GreenPartitions>> partitions_; // per GPU: its SM partitions, or none
  std::mutex lanes_mutex_;
  Lanes device_lanes_, link_lanes_;
};

}  // namespace

int cuda_device_count() { return static_cast<int>(c10::cuda::device_count()); }

Result<Measurement> execute_on_cuda(const Graph& graph, const Placement& placement, const Cluster& cluster,
                                    const ExecOptions& options) {
  const int gpus = cuda_device_count();
  if (gpus == 0) return make_error("no CUDA device is visible to this process");
  if (Status ok = check_placed_run(graph, placement, cluster, options); !ok) return ok.error();  // before building tensors
  for (int d = 0; d < cluster.size(); ++d)  // copies run on link lanes, whose streams a GPU's copy engines serve
    if (!cluster.device(d).copy_engine)
      return make_error("device " + std::to_string(d) + " (" + cluster.device(d).name + ") of cluster " + cluster.name() +
                        " has no copy engine (copy_engine: false); the CUDA backend copies through copy engines only");
  // A green context is current to one thread at a time: a device on a partitioned GPU (one that
  // runs more than one device) has one stream.
  for (int d = 0; options.sm_partitions && !options.fixed_order && d < cluster.size(); ++d)
    if (const int sharing = (cluster.size() - d % gpus + gpus - 1) / gpus; sharing > 1 && cluster.device(d).streams > 1)
      return make_error("device " + std::to_string(d) + " (" + cluster.device(d).name + ") has " +
                        std::to_string(cluster.device(d).streams) +
                        " streams; on SM partitions (--partition sms) each device runs one stream");
  std::unique_ptr<CudaBackend> backend;
  try {
    backend = std::make_unique<CudaBackend>(graph, cluster, options, gpus);
  } catch (const std::exception& e) {
    return make_error(std::string("preparing the GPUs: ") + e.what());
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
