// SPDX-License-Identifier: BSD-3-Clause
#include "coda/gemm/tuned_gpu.hpp"

#include <atomic>
#include <cstring>

#include <cuda_runtime_api.h>

namespace coda::gemm {

const char* to_string(TunedGpu gpu) {
  switch (gpu) {
    case TunedGpu::kH100:
      return "H100";
    case TunedGpu::kH200:
      return "H200";
    case TunedGpu::kUntuned:
      return "untuned";
  }
  return "?";
}

TunedGpu tuned_gpu_from(const char* device_name, int sm_count) {
  auto has = [&](const char* s) { return std::strstr(device_name, s) != nullptr; };
  // The NVL and PCIe parts have other memory systems (and clocks): not the part tuned on.
  if (sm_count != 132 || has("NVL") || has("PCIe")) return TunedGpu::kUntuned;
  if (has("H200")) return TunedGpu::kH200;
  if (has("H100")) return TunedGpu::kH100;
  return TunedGpu::kUntuned;
}

TunedGpu current_tuned_gpu() {
  // Per ordinal: 0 not yet queried, else the TunedGpu + 1 (static storage: zero-initialised).
  // Racing first queries of one device store the same answer.
  static std::atomic<int> cache[64];
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) {
    cudaGetLastError();  // no device: clear the error the query leaves
    return TunedGpu::kUntuned;
  }
  int known = cache[device].load(std::memory_order_relaxed);
  if (known == 0) {
    cudaDeviceProp prop{};
    const bool ok = cudaGetDeviceProperties(&prop, device) == cudaSuccess;
    if (!ok) cudaGetLastError();
    known = 1 + int(ok ? tuned_gpu_from(prop.name, prop.multiProcessorCount) : TunedGpu::kUntuned);
    cache[device].store(known, std::memory_order_relaxed);
  }
  return static_cast<TunedGpu>(known - 1);
}

}  // namespace coda::gemm
