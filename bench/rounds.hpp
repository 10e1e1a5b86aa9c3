// SPDX-License-Identifier: BSD-3-Clause
// What the fused-op benchmarks share: a device allocation, named launch variants, and the
// interleaved-rounds method (order alternating per round; per-round medians; the median of
// per-round ratios against a baseline variant).
#pragma once

#include <algorithm>
#include <functional>
#include <ostream>
#include <memory>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "gemm_bench.hpp"
#include "timing.hpp"

namespace coda::bench {

struct DeviceAlloc {
  std::shared_ptr<void> p;
  explicit DeviceAlloc(std::size_t bytes) {
    void* raw = nullptr;
    check_cuda(cudaMalloc(&raw, bytes), "cudaMalloc");
    check_cuda(cudaMemset(raw, 0, bytes), "cudaMemset");
    p.reset(raw, [](void* q) { cudaFree(q); });
  }
  template <class T = void> T* get() const { return static_cast<T*>(p.get()); }
};

// A non-blocking stream with a cuBLAS handle on it (32 MiB workspace), and the device's properties:
// what every benchmark in this folder runs on.
struct BenchDevice {
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  DeviceAlloc cublas_workspace{32u << 20};
  cudaDeviceProp prop{};

  BenchDevice() {
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_cublas(cublasCreate(&handle), "cublasCreate");
    check_cublas(cublasSetStream(handle, stream), "cublasSetStream");
    check_cublas(cublasSetWorkspace(handle, cublas_workspace.get(), 32u << 20),
                 "cublasSetWorkspace");
    check_cuda(cudaGetDeviceProperties(&prop, 0), "props");
  }
  ~BenchDevice() {
    cublasDestroy(handle);
    cudaStreamDestroy(stream);
  }
  BenchDevice(const BenchDevice&) = delete;
  BenchDevice& operator=(const BenchDevice&) = delete;
};

// One variant: launch(i) runs it on operand set i.
struct Timed {
  std::string name;
  std::function<void(int)> launch;
  std::string family = "";
};

// Per-variant per-round medians; *all gets every launch time of each variant.
inline std::vector<std::vector<double>> interleaved_rounds(const std::vector<Timed>& v, int sets,
                                                           int rounds, int reps, cudaStream_t s,
                                                           std::vector<std::vector<double>>* all) {
  std::vector<std::vector<double>> per_round(v.size());
  all->assign(v.size(), {});
  for (int r = 0; r < rounds; ++r)
    for (std::size_t j = 0; j < v.size(); ++j) {
      std::size_t i = r % 2 ? v.size() - 1 - j : j;
      auto ms = time_launches([&](int x) { v[i].launch((r * reps + x) % sets); }, reps, s);
      (*all)[i].insert((*all)[i].end(), ms.begin(), ms.end());
      per_round[i].push_back(median(ms));
    }
  return per_round;
}

inline double median_ratio(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (std::size_t i = 0; i < num.size(); ++i) r.push_back(num[i] / den[i]);
  return median(r);
}

// The opening of a results JSON (docs/benchmarks.md §4): commit, date, GPU, command, then
// `"rows": [`.
inline void write_json_header(std::ostream& f, const BenchArgs& args, const char* gpu) {
  f << "{\n  \"commit\": \"" << args.commit << "\",\n  \"date\": \"" << args.date
    << "\",\n  \"gpu\": \"" << gpu << "\",\n  \"command\": \"" << args.command
    << "\",\n  \"rows\": [\n";
}

}  // namespace coda::bench
