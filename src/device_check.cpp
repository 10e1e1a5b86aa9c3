// SPDX-License-Identifier: BSD-3-Clause
#include "coda/device_check.hpp"

#include <string>

#include <cuda_runtime_api.h>

namespace coda {

namespace {
thread_local bool g_checks_done = false;
}  // namespace

DeviceChecksDone::DeviceChecksDone() : outer_(g_checks_done) { g_checks_done = true; }
DeviceChecksDone::~DeviceChecksDone() { g_checks_done = outer_; }
bool DeviceChecksDone::active() { return g_checks_done; }

void require_current_device(int device, const char* where, const char* name) {
  if (g_checks_done) return;
  int current = -1;
  cudaError_t err = cudaGetDevice(&current);
  require(err == cudaSuccess, where, std::string("no CUDA device: ") + cudaGetErrorString(err));
  require(current == device, where,
          std::string(name) + ": is on device " + std::to_string(device) +
              " but the current device is " + std::to_string(current));
}

void require_device_memory(const void* ptr, int device, const char* where, const char* name) {
  if (g_checks_done) return;
  cudaPointerAttributes attr{};
  cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the error this query leaves
    throw Error(std::string(where) + ": " + name + ": not a CUDA pointer (" +
                cudaGetErrorString(err) + ")");
  }
  const bool on_device = attr.type == cudaMemoryTypeManaged ||
                         (attr.type == cudaMemoryTypeDevice && attr.device == device);
  require(on_device, where,
          std::string(name) + ": must be device memory on device " + std::to_string(device));
}

void require_gemm_operands_on_device(const TensorView& D, const TensorView& A, const TensorView& B,
                                     const char* where) {
  require_current_device(D.device, where, "D");
  require_device_memory(A.data, D.device, where, "A");
  require_device_memory(B.data, D.device, where, "B");
  require_device_memory(D.data, D.device, where, "D");
}

}  // namespace coda
