#pragma once
// Disjoint SM partitions of one GPU through CUDA green contexts (driver API, CUDA 12.5 and later,
// looked up at run time):
// how the CUDA backend runs D cluster devices on one GPU as D smaller GPUs, each with its own SMs
// (memory bandwidth, L2 and copy engines stay shared), instead of D sets of streams that share
// every SM; SMs left over by the chip's granularity stay idle). A green context may be current to
// one thread at a time, so each partition serves one device thread. Internal to executor/;
// compiled only where LibTorch has CUDA.
#include <cuda.h>

#include <vector>

namespace gantry {

class GreenPartitions {
 public:
  // `parts` partitions of GPU `gpu` with equal SM counts, the largest the chip's granularity
  // allows (8 SMs on Hopper). Throws std::runtime_error naming the GPU and the driver's error.
  GreenPartitions(int gpu, int parts);
  ~GreenPartitions();
  GreenPartitions(const GreenPartitions&) = delete;
  GreenPartitions& operator=(const GreenPartitions&) = delete;

  int size() const { return static_cast<int>(parts_.size()); }
  int gpu_sms() const { return gpu_sms_; }
  int sms(int part) const { return parts_[static_cast<std::size_t>(part)].sms; }
  // Current on the thread that launches into the partition: kernels launched there run on its SMs.
  CUcontext context(int part) const { return parts_[static_cast<std::size_t>(part)].context; }
  CUstream stream(int part) const { return parts_[static_cast<std::size_t>(part)].stream; }  // non-blocking

 private:
#if CUDA_VERSION >= 12050
  using Green = CUgreenCtx;
#else
  using Green = void*;  // never made: the constructor throws
#endif
  struct Part {
    Green green = nullptr;
    CUcontext context = nullptr;
    CUstream stream = nullptr;
    int sms = 0;
  };
  void release() noexcept;

  std::vector<Part> parts_;
  int gpu_sms_ = 0;
};

// Makes `context` current on the calling thread; throws naming the driver's error.
void make_current(CUcontext context);
// Whether `context` is the calling thread's current context; throws when the driver cannot say.
bool is_current(CUcontext context);

}  // namespace gantry
