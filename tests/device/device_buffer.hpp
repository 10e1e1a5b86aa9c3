// SPDX-License-Identifier: BSD-3-Clause
// Test helpers: an owning device buffer, checked CUDA calls, fresh seeds.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#define CODA_CHECK_CUDA(expr)                                                          \
  do {                                                                                 \
    cudaError_t err_ = (expr);                                                         \
    if (err_ != cudaSuccess)                                                           \
      throw std::runtime_error(std::string(#expr) + ": " + cudaGetErrorString(err_)); \
  } while (0)

namespace coda::testing {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    CODA_CHECK_CUDA(cudaMalloc(&ptr_, bytes ? bytes : 16));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceBuffer() { cudaFree(ptr_); }

  template <class T = void>
  T* get() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

  template <class T>
  void upload(const std::vector<T>& host) {
    CODA_CHECK_CUDA(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  template <class T>
  std::vector<T> download() const {
    std::vector<T> host(bytes_ / sizeof(T));
    CODA_CHECK_CUDA(cudaMemcpy(host.data(), ptr_, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  // Every byte 0xFF: NaN in bf16 and f32, so an unwritten output element fails the check.
  void poison() {
    CODA_CHECK_CUDA(cudaMemset(ptr_, 0xFF, bytes_));
    CODA_CHECK_CUDA(cudaDeviceSynchronize());  // ordered before work on any stream
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// A fresh seed per test (std::random_device), or CODA_TEST_SEED to replay one; printed always.
inline std::uint64_t fresh_seed(const char* test) {
  std::uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("CODA_TEST_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::printf("[ seed ] %s: CODA_TEST_SEED=%llu\n", test, static_cast<unsigned long long>(seed));
  return seed;
}

}  // namespace coda::testing
