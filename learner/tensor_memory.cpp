#include "learner/tensor_memory.hpp"

#include <malloc.h>

#include <mutex>

namespace gantry {
namespace {

constexpr int kMmapThreshold = 32 << 20;   // glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
constexpr int kTrimThreshold = 256 << 20;  // free top of a heap kept up to this size

}  // namespace

bool keep_tensor_memory() {
  static std::once_flag once;
  static bool accepted = false;
  std::call_once(once, [] {
#if defined(__GLIBC__)
    // mallopt returns 1 on success; setting the mmap threshold turns off glibc's dynamic one.
    accepted = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
#endif
  });
  return accepted;
}

}  // namespace gantry
