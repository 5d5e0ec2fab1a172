#include "executor/cpu/device_arena.hpp"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace gantry {

namespace {

class Arena;

// Every block starts with this header, so that a data pointer alone finds its arena: LibTorch may
// free through raw_deallocate, which passes nothing else.
struct alignas(64) BlockHeader {
  Arena* arena;            // nullptr: a plain block of a thread without an arena
  std::size_t capacity;    // bytes after the header
  std::uint64_t freed_at;  // when it was last given back (the oldest cached block goes first)
};
static_assert(sizeof(BlockHeader) == 64, "the header keeps data 64-byte aligned");

// 64-byte granules up to a page, whole pages above: runs repeat the same sizes, so blocks of one
// size class are reused exactly.
constexpr std::size_t kPage = 4096;

std::size_t size_class(std::size_t n) {
  if (n <= kPage) return (n + 63) / 64 * 64;
  return (n + kPage - 1) / kPage * kPage;
}

BlockHeader* new_block(Arena* arena, std::size_t capacity) {
  void* raw = nullptr;
  if (posix_memalign(&raw, 64, sizeof(BlockHeader) + capacity) != 0) throw std::bad_alloc();
  auto* header = static_cast<BlockHeader*>(raw);
  header->arena = arena;
  header->capacity = capacity;
  return header;
}

void* data_of(BlockHeader* header) { return reinterpret_cast<char*>(header) + sizeof(BlockHeader); }
BlockHeader* header_of(void* data) {
  return reinterpret_cast<BlockHeader*>(static_cast<char*>(data) - sizeof(BlockHeader));
}

// Bytes kept for reuse by all arenas together; past it, an arena gives back its oldest cached
// blocks (sizes that runs no longer ask for) before it caches another.
constexpr std::size_t kMaxCachedBytes = std::size_t{2} << 30;
std::atomic<std::size_t> g_cached_bytes{0};
std::atomic<std::uint64_t> g_clock{0};

class Arena {
 public:
  BlockHeader* take(std::size_t n) {
    const std::size_t capacity = size_class(n);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.allocations;
      auto it = free_.find(capacity);
      if (it != free_.end() && !it->second.empty()) {
        BlockHeader* header = it->second.back();
        it->second.pop_back();
        ++stats_.reused;
        uncache(capacity);
        return header;
      }
    }
    return new_block(this, capacity);
  }

  // Called from tensor deleters, which must not throw: a block that cannot be cached is freed.
  void give_back(BlockHeader* header) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    while (g_cached_bytes.load() + header->capacity > kMaxCachedBytes && evict_oldest()) {
    }
    if (g_cached_bytes.load() + header->capacity > kMaxCachedBytes) return std::free(header);
    try {
      free_[header->capacity].push_back(header);
    } catch (...) {
      return std::free(header);
    }
    header->freed_at = ++g_clock;
    stats_.cached_bytes += header->capacity;
    g_cached_bytes += header->capacity;
  }

  ArenaStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  void uncache(std::size_t capacity) {
    stats_.cached_bytes -= capacity;
    g_cached_bytes -= capacity;
  }

  // Frees this arena's longest-cached block; false when it caches none.
  bool evict_oldest() {
    std::vector<BlockHeader*>* oldest_list = nullptr;
    std::size_t oldest_index = 0;
    for (auto& [capacity, blocks] : free_)
      for (std::size_t i = 0; i < blocks.size(); ++i)
        if (!oldest_list || blocks[i]->freed_at < (*oldest_list)[oldest_index]->freed_at) {
          oldest_list = &blocks;
          oldest_index = i;
        }
    if (!oldest_list) return false;
    BlockHeader* victim = (*oldest_list)[oldest_index];
    (*oldest_list)[oldest_index] = oldest_list->back();
    oldest_list->pop_back();
    uncache(victim->capacity);
    ++stats_.evicted;
    std::free(victim);
    return true;
  }

  std::mutex mutex_;
  std::map<std::size_t, std::vector<BlockHeader*>> free_;
  ArenaStats stats_;
};

thread_local Arena* t_arena = nullptr;

void release(void* data) {
  if (!data) return;
  BlockHeader* header = header_of(data);
  if (header->arena)
    header->arena->give_back(header);
  else
    std::free(header);
}

// LibTorch 2.3 made allocate() non-const and added copy_data(); the standalone gantry-exec builds
// against the GPU machines' newer LibTorch, the main build against Debian's 1.13.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define GANTRY_ALLOCATE_CONST
#define GANTRY_ALLOCATOR_COPIES 1
#else
#define GANTRY_ALLOCATE_CONST const
#define GANTRY_ALLOCATOR_COPIES 0
#endif

class ArenaAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t n) GANTRY_ALLOCATE_CONST override {
    if (n > std::numeric_limits<std::size_t>::max() - kPage - sizeof(BlockHeader)) throw std::bad_alloc();
    BlockHeader* header = t_arena ? t_arena->take(n) : new_block(nullptr, n);
    void* data = data_of(header);
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
#if GANTRY_ALLOCATOR_COPIES
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#endif
};

// Never destroyed: blocks may be freed during static destruction, after any arena would be.
std::mutex& registry_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
std::vector<Arena*>& registry() {
  static auto* arenas = new std::vector<Arena*>;
  return *arenas;
}

Arena* arena_for(int device) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& arenas = registry();
  while (static_cast<int>(arenas.size()) <= device) arenas.push_back(new Arena);
  return arenas[static_cast<std::size_t>(device)];
}

}  // namespace

void install_device_arenas() {
  static std::once_flag once;
  std::call_once(once, [] { c10::SetCPUAllocator(new ArenaAllocator, /*priority=*/1); });
}

namespace {

// Installed when the program starts, before its threads and almost every allocation: LibTorch's
// allocator registry is not safe to change while other threads allocate, and a buffer the previous
// allocator made must not be freed through raw_deallocate after the switch (MKL-DNN frees that way).
const bool g_installed_at_start = (install_device_arenas(), true);

}  // namespace

void use_device_arena(int device) {
  install_device_arenas();
  t_arena = device >= 0 ? arena_for(device) : nullptr;
}

ScopedDeviceArena::ScopedDeviceArena(int device) : previous_(t_arena) { use_device_arena(device); }

ScopedDeviceArena::~ScopedDeviceArena() { t_arena = static_cast<Arena*>(previous_); }

ArenaStats device_arena_stats(int device) {
  if (device < 0) return {};
  return arena_for(device)->stats();
}

}  // namespace gantry
