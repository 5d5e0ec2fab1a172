#include "learner/tensor_memory.hpp"

#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gantry {
namespace {

// Blocks up to half a thread arena's heap (64 MiB) come from the heaps; larger ones are mapped.
constexpr int kMmapThreshold = 32 << 20;
constexpr int kTrimThreshold = 256 << 20;  // free top of a heap kept up to this size
// Grown and kept beyond each request: a thread's arena is made of heaps of at most 64 MiB, and a
// heap left empty is unmapped whatever the trim threshold, unless the pad keeps it.
constexpr int kTopPad = 64 << 20;

}  // namespace

void keep_tensor_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(__GLIBC__)
    // Setting the mmap threshold also turns off glibc's dynamic one.
    mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
    mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
    mallopt(M_TOP_PAD, kTopPad);
#endif
  });
}

void release_tensor_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace gantry
