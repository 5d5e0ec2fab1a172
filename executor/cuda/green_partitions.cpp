#ifdef GANTRY_WITH_CUDA

#include "executor/cuda/green_partitions.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace gantry {

#if CUDA_VERSION >= 12050  // green contexts with streams of their own (cuGreenCtxStreamCreate)

namespace {

// The driver's functions, looked up when partitions are first made: linking libcuda would make
// every program of the build need a driver to start (LibTorch itself loads it only when used), and
// a driver older than the toolkit would fail at load time instead of saying which call it lacks.
struct Driver {
  decltype(&::cuInit) init;
  decltype(&::cuGetErrorName) error_name;
  decltype(&::cuDeviceGet) device_get;
  decltype(&::cuDeviceGetDevResource) device_resource;
  decltype(&::cuDevSmResourceSplitByCount) split;
  decltype(&::cuDevResourceGenerateDesc) describe;
  decltype(&::cuGreenCtxCreate) green_create;
  decltype(&::cuGreenCtxDestroy) green_destroy;
  decltype(&::cuCtxFromGreenCtx) context_of;
  decltype(&::cuGreenCtxStreamCreate) stream_create;
  decltype(&::cuStreamDestroy) stream_destroy;
  decltype(&::cuCtxSetCurrent) set_current;
  decltype(&::cuCtxGetCurrent) get_current;
};

template <class F>
void find(void* library, const char* symbol, F* f) {
  *f = reinterpret_cast<F>(dlsym(library, symbol));
  if (!*f)
    throw std::runtime_error(std::string("the CUDA driver has no ") + symbol +
                             " (SM partitions need a driver of CUDA 12.5 or later)");
}

Driver load_driver() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) throw std::runtime_error(std::string("cannot load the CUDA driver (libcuda.so.1): ") + dlerror());
  Driver d;
  find(library, "cuInit", &d.init);
  find(library, "cuGetErrorName", &d.error_name);
  find(library, "cuDeviceGet", &d.device_get);
  find(library, "cuDeviceGetDevResource", &d.device_resource);
  find(library, "cuDevSmResourceSplitByCount", &d.split);
  find(library, "cuDevResourceGenerateDesc", &d.describe);
  find(library, "cuGreenCtxCreate", &d.green_create);
  find(library, "cuGreenCtxDestroy", &d.green_destroy);
  find(library, "cuCtxFromGreenCtx", &d.context_of);
  find(library, "cuGreenCtxStreamCreate", &d.stream_create);
  find(library, "cuStreamDestroy_v2", &d.stream_destroy);
  find(library, "cuCtxSetCurrent", &d.set_current);
  find(library, "cuCtxGetCurrent", &d.get_current);
  return d;
}

const Driver& driver() {
  static const Driver d = load_driver();  // a failed load throws, and the next call tries again
  return d;
}

void check(CUresult result, const std::string& what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  driver().error_name(result, &name);
  throw std::runtime_error(what + " failed: " + (name ? std::string(name) : "driver error " + std::to_string(result)));
}

// The largest SM count that the split still makes `parts` groups of (it rounds a count up to the
// chip's granularity, so total / parts itself may give fewer groups).
unsigned part_size(const CUdevResource& all, unsigned parts, const std::string& where) {
  for (unsigned size = all.sm.smCount / parts; size > 0; --size) {
    unsigned groups = 0;
    check(driver().split(nullptr, &groups, &all, nullptr, 0, size), where + ": cuDevSmResourceSplitByCount");
    if (groups >= parts) return size;
  }
  throw std::runtime_error(where + ": its " + std::to_string(all.sm.smCount) + " SMs cannot be split into " +
                           std::to_string(parts) + " partitions");
}

}  // namespace

GreenPartitions::GreenPartitions(int gpu, int parts) {
  const std::string where = "SM partitions of GPU " + std::to_string(gpu);
  try {
    const Driver& cu = driver();
    check(cu.init(0), where + ": cuInit");
    CUdevice device;
    check(cu.device_get(&device, gpu), where + ": cuDeviceGet");
    CUdevResource all;
    check(cu.device_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM), where + ": cuDeviceGetDevResource");
    gpu_sms_ = static_cast<int>(all.sm.smCount);
    const unsigned size = part_size(all, static_cast<unsigned>(parts), where);
    std::vector<CUdevResource> groups(static_cast<std::size_t>(parts));
    unsigned made = static_cast<unsigned>(parts);
    check(cu.split(groups.data(), &made, &all, nullptr, 0, size), where + ": cuDevSmResourceSplitByCount");
    if (made < static_cast<unsigned>(parts))
      throw std::runtime_error(where + ": the split made " + std::to_string(made) + " of " + std::to_string(parts) + " partitions");
    for (CUdevResource& group : groups) {
      CUdevResourceDesc desc;
      check(cu.describe(&desc, &group, 1), where + ": cuDevResourceGenerateDesc");
      parts_.push_back({});
      Part& part = parts_.back();
      part.sms = static_cast<int>(group.sm.smCount);
      check(cu.green_create(&part.green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM), where + ": cuGreenCtxCreate");
      check(cu.context_of(&part.context, part.green), where + ": cuCtxFromGreenCtx");
      check(cu.stream_create(&part.stream, part.green, CU_STREAM_NON_BLOCKING, 0), where + ": cuGreenCtxStreamCreate");
    }
  } catch (...) {
    release();
    throw;
  }
}

// Streams first: a green context's streams fail once it is gone.
void GreenPartitions::release() noexcept {
  for (Part& part : parts_) {
    if (part.stream) driver().stream_destroy(part.stream);
    if (part.green) driver().green_destroy(part.green);
  }
  parts_.clear();
}

void make_current(CUcontext context) { check(driver().set_current(context), "making an SM partition's context current"); }

bool is_current(CUcontext context) {
  CUcontext current = nullptr;
  check(driver().get_current(&current), "asking the thread's current context");
  return current == context;
}

#else  // a CUDA before 12.5: no streams of green contexts

GreenPartitions::GreenPartitions(int gpu, int) {
  throw std::runtime_error("SM partitions of GPU " + std::to_string(gpu) + ": this build's CUDA (" +
                           std::to_string(CUDA_VERSION) + ") is older than 12.5, which they need");
}
void GreenPartitions::release() noexcept {}
void make_current(CUcontext) { throw std::runtime_error("SM partitions need CUDA 12.5 or later"); }
bool is_current(CUcontext) { return false; }

#endif

GreenPartitions::~GreenPartitions() { release(); }

}  // namespace gantry

#endif  // GANTRY_WITH_CUDA
