// SPDX-License-Identifier: BSD-3-Clause
// Benchmark plumbing: operand sets rotated past the L2, the cuBLAS baseline, per-launch event
// timing, and the median helpers of docs/benchmarks.md §3.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "coda/gemm/gemm.hpp"
#include "shapes.hpp"

namespace coda::bench {

void check_cuda(cudaError_t err, const char* what);
void check_cublas(cublasStatus_t status, const char* what);

// Several independent (A, B, D) sets for one shape, filled with uniform random bf16 in [-1, 1),
// enough of them to exceed the L2 several times over, so each launch reads from HBM.
class OperandSets {
 public:
  OperandSets(const GemmShape& shape, std::size_t min_total_bytes);
  ~OperandSets();
  OperandSets(const OperandSets&) = delete;
  OperandSets& operator=(const OperandSets&) = delete;

  int count() const { return static_cast<int>(sets_.size()); }
  // coda views of set i, in the shape's operand layout.
  TensorView a(int i) const;
  TensorView b(int i) const;
  TensorView d(int i) const;
  // D = A·Bᵀ for set i through cublasGemmEx (bf16, fp32 compute), the speed of light.
  void cublas_gemm(cublasHandle_t handle, int i) const;

 private:
  struct Set { void *a, *b, *d; };
  GemmShape shape_;
  std::vector<Set> sets_;
};

// max |x − y| / max |y| over two bf16 M×N buffers (device), for the sanity check before timing.
double relative_difference(const void* x, const void* y, std::size_t count);

// Times `launch(i)` for i = 0..reps-1 with a pair of CUDA events around each launch; ms each.
std::vector<double> time_launches(const std::function<void(int)>& launch, int reps,
                                  cudaStream_t stream);

double median(std::vector<double> v);

}  // namespace coda::bench
