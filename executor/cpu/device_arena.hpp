#pragma once
// Per-device memory for the CPU backend: each placement device has its own arena, a caching
// allocator whose blocks are first written (so faulted in) by the thread that asked for them, and
// reused by size after they are freed. A device thread allocates every value it computes from its
// device's arena, and a copy (made by a link thread, or by the source device's thread when the
// device has no copy engine) is allocated from the destination's, so a transfer is a copy from
// one arena into another. Reuse also keeps fresh-page faults out of timed runs after the warm-up:
// a 64 MiB copy into fresh pages took 35-39 ms here, against 2 ms into reused ones.
//
// LibTorch allocates CPU tensors through one process-wide allocator; install_device_arenas()
// replaces it, when a program linking the executor starts, with one that serves a thread from its
// arena when it has one, and with plain 64-byte-aligned blocks otherwise (other users of LibTorch
// in the process, such as the learner, get no caching and lose only the default allocator's
// profiler memory reports). Arenas live until the process ends, since a value may be freed after
// its run, by any thread; the blocks they cache for reuse are at most 2 GiB in all, the oldest
// freed going first.
#include <cstddef>

namespace gantry {

// Idempotent; runs when the program starts (device_arena.cpp).
void install_device_arenas();

// Until the next call, this thread's CPU tensors come from `device`'s arena (-1: none, the
// previous allocator). Installs the arenas if needed.
void use_device_arena(int device);

// Within its scope, this thread's CPU tensors come from `device`'s arena; then from the arena (or
// none) it used before. How a thread makes one copy into another device's arena.
class ScopedDeviceArena {
 public:
  explicit ScopedDeviceArena(int device);
  ~ScopedDeviceArena();
  ScopedDeviceArena(const ScopedDeviceArena&) = delete;
  ScopedDeviceArena& operator=(const ScopedDeviceArena&) = delete;

 private:
  void* previous_;  // the thread's arena before (opaque here)
};

struct ArenaStats {
  std::size_t allocations = 0;  // blocks requested from this arena
  std::size_t reused = 0;       // of which served from freed blocks
  std::size_t cached_bytes = 0; // freed blocks kept for reuse
  std::size_t evicted = 0;      // cached blocks freed to stay under the cap
};
ArenaStats device_arena_stats(int device);

}  // namespace gantry
