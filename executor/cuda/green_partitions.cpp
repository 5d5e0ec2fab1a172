#ifdef GANTRY_WITH_CUDA

#include "executor/cuda/green_partitions.hpp"

#include <stdexcept>
#include <string>

namespace gantry {

namespace {

void check(CUresult result, const std::string& what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(result, &name);
  throw std::runtime_error(what + " failed: " + (name ? std::string(name) : "driver error " + std::to_string(result)));
}

// The largest SM count that the split still makes `parts` groups of (it rounds a count up to the
// chip's granularity, so total / parts itself may give fewer groups).
unsigned part_size(const CUdevResource& all, unsigned parts, const std::string& where) {
  for (unsigned size = all.sm.smCount / parts; size > 0; --size) {
    unsigned groups = 0;
    check(cuDevSmResourceSplitByCount(nullptr, &groups, &all, nullptr, 0, size), where + ": cuDevSmResourceSplitByCount");
    if (groups >= parts) return size;
  }
  throw std::runtime_error(where + ": its " + std::to_string(all.sm.smCount) + " SMs cannot be split into " +
                           std::to_string(parts) + " partitions");
}

}  // namespace

GreenPartitions::GreenPartitions(int gpu, int parts) {
  const std::string where = "SM partitions of GPU " + std::to_string(gpu);
  try {
    check(cuInit(0), where + ": cuInit");
    CUdevice device;
    check(cuDeviceGet(&device, gpu), where + ": cuDeviceGet");
    CUdevResource all;
    check(cuDeviceGetDevResource(device, &all, CU_DEV_RESOURCE_TYPE_SM), where + ": cuDeviceGetDevResource");
    gpu_sms_ = static_cast<int>(all.sm.smCount);
    const unsigned size = part_size(all, static_cast<unsigned>(parts), where);
    std::vector<CUdevResource> groups(static_cast<std::size_t>(parts));
    unsigned made = static_cast<unsigned>(parts);
    check(cuDevSmResourceSplitByCount(groups.data(), &made, &all, nullptr, 0, size), where + ": cuDevSmResourceSplitByCount");
    if (made < static_cast<unsigned>(parts))
      throw std::runtime_error(where + ": the split made " + std::to_string(made) + " of " + std::to_string(parts) + " partitions");
    for (CUdevResource& group : groups) {
      CUdevResourceDesc desc;
      check(cuDevResourceGenerateDesc(&desc, &group, 1), where + ": cuDevResourceGenerateDesc");
      parts_.push_back({});
      Part& part = parts_.back();
      part.sms = static_cast<int>(group.sm.smCount);
      check(cuGreenCtxCreate(&part.green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM), where + ": cuGreenCtxCreate");
      check(cuCtxFromGreenCtx(&part.context, part.green), where + ": cuCtxFromGreenCtx");
      check(cuGreenCtxStreamCreate(&part.stream, part.green, CU_STREAM_NON_BLOCKING, 0), where + ": cuGreenCtxStreamCreate");
    }
  } catch (...) {
    release();
    throw;
  }
}

GreenPartitions::~GreenPartitions() { release(); }

// Streams first: a green context's streams fail once it is gone.
void GreenPartitions::release() noexcept {
  for (Part& part : parts_) {
    if (part.stream) cuStreamDestroy(part.stream);
    if (part.green) cuGreenCtxDestroy(part.green);
  }
  parts_.clear();
}

void make_current(CUcontext context) { check(cuCtxSetCurrent(context), "making an SM partition's context current"); }

bool is_current(CUcontext context) {
  CUcontext current = nullptr;
  return cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context;
}

}  // namespace gantry

#endif  // GANTRY_WITH_CUDA
