#include "learner/tensor_memory.hpp"

#include <malloc.h>

#include <mutex>

namespace gantry {
namespace {

// Blocks up to half a thread arena's heap (64 MiB) come from the heaps; larger ones are mapped.
constexpr int kMmapThreshold = 32 << 20;
constexpr int kTrimThreshold = 256 << 20;  // free top of a heap kept up to this size
// Grown and kept beyond each request: a thread's arena is made of heaps of at most 64 MiB, and a
// heap left empty is unmapped whatever the trim threshold, unless the pad keeps it.
constexpr int kTopPad = 64 << 20;

}  // namespace

bool keep_tensor_memory() {
  static std::once_flag once;
  static bool accepted = false;
  std::call_once(once, [] {
#if defined(__GLIBC__)
    // mallopt returns 1 on success; setting the mmap threshold turns off glibc's dynamic one.
    accepted = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1 &&
               mallopt(M_TOP_PAD, kTopPad) == 1;
#endif
  });
  return accepted;
}

}  // namespace gantry
