// The CUDA driver API, loaded at run time: dlopen("libcuda.so.1") and cuGetProcAddress, so that
// nothing links libcuda and Warpbook starts where there is no driver. cuda.h supplies the types
// only. Private to app/core (cuda.h is on warpbook_core's private include path); the roofline
// probes can use it too.
#pragma once
#include "core/backend.hpp"

#include <cuda.h>

#include <string>
#include <vector>

namespace wb::cuda {

// Entry points every use needs. decltype(&::name) takes the signature cuda.h declares for the
// version we compile against (cuMemAlloc is cuMemAlloc_v2, and so on); cuGetProcAddress is asked
// for the plain name and that same version, so the two agree.
#define WB_CUDA_REQUIRED(X)                                                                        \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)                                                                              \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceGetUuid)                                                                               \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDeviceTotalMem)                                                                              \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease)                                                                     \
  X(cuCtxSetCurrent)                                                                               \
  X(cuModuleLoadDataEx)                                                                            \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncGetAttribute)                                                                            \
  X(cuFuncSetAttribute)                                                                            \
  X(cuMemGetInfo)                                                                                  \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemcpyHtoDAsync)                                                                             \
  X(cuMemcpyDtoHAsync)                                                                             \
  X(cuMemsetD8Async)                                                                               \
  X(cuStreamCreate)                                                                                \
  X(cuStreamDestroy)                                                                               \
  X(cuStreamQuery)                                                                                 \
  X(cuEventCreate)                                                                                 \
  X(cuEventDestroy)                                                                                \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventElapsedTime)                                                                            \
  X(cuLaunchKernel)                                                                                \
  X(cuLaunchCooperativeKernel)                                                                     \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

// Used when present; their absence only turns a feature off (graph timing, signature checks,
// pinned staging of large transfers, the printf FIFO and heap sizes, tensor-map arguments).
#define WB_CUDA_OPTIONAL(X)                                                                        \
  X(cuEventQuery)                                                                                  \
  X(cuFuncGetParamInfo)                                                                            \
  X(cuEventRecordWithFlags)                                                                        \
  X(cuStreamBeginCapture)                                                                          \
  X(cuStreamEndCapture)                                                                            \
  X(cuGraphInstantiateWithFlags)                                                                   \
  X(cuGraphLaunch)                                                                                 \
  X(cuGraphExecDestroy)                                                                            \
  X(cuGraphDestroy)                                                                                \
  X(cuMemAllocHost)                                                                                \
  X(cuMemFreeHost)                                                                                 \
  X(cuCtxSetLimit)                                                                                 \
  X(cuTensorMapEncodeTiled)

struct Driver {
#define WB_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  WB_CUDA_REQUIRED(WB_CUDA_MEMBER)
  WB_CUDA_OPTIONAL(WB_CUDA_MEMBER)
#undef WB_CUDA_MEMBER
  int version = 0; // cuDriverGetVersion: 13000 for CUDA 13.0

  // "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"
  std::string error(CUresult r) const;
  bool has_graphs() const {
    return cuEventRecordWithFlags && cuStreamBeginCapture && cuStreamEndCapture &&
           cuGraphInstantiateWithFlags && cuGraphLaunch && cuGraphExecDestroy && cuGraphDestroy;
  }
};

// The process's driver table, loaded once; nullptr with `why` set when there is no usable driver.
const Driver* driver(std::string& why);

} // namespace wb::cuda
