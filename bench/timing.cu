// SPDX-License-Identifier: BSD-3-Clause
#include "timing.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include <cuda_bf16.h>

namespace coda::bench {

void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}
void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(status));
}

namespace {

__global__ void fill_uniform_bf16(__nv_bfloat16* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;  // splitmix64
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    p[i] = __float2bfloat16(float(x >> 40) * 0x1p-23f - 1.0f);
  }
}

__global__ void max_abs_diff(const __nv_bfloat16* x, const __nv_bfloat16* y, std::size_t n,
                             unsigned* diff_bits, unsigned* ref_bits) {
  float diff = 0.0f, ref = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    float a = __bfloat162float(x[i]), b = __bfloat162float(y[i]);
    diff = fmaxf(diff, isfinite(a) ? fabsf(a - b) : INFINITY);
    ref = fmaxf(ref, fabsf(b));
  }
  atomicMax(diff_bits, __float_as_uint(diff));  // non-negative floats order like their bits
  atomicMax(ref_bits, __float_as_uint(ref));
}

}  // namespace

OperandSets::OperandSets(const GemmShape& shape, std::size_t min_total_bytes) : shape_(shape) {
  const std::size_t a = std::size_t(shape.m) * shape.k, b = std::size_t(shape.n) * shape.k,
                    d = std::size_t(shape.m) * shape.n;
  const std::size_t set_bytes = 2 * (a + b + d);
  const int count = static_cast<int>(
      std::clamp<std::size_t>((min_total_bytes + set_bytes - 1) / set_bytes, 2, 16));
  for (int i = 0; i < count; ++i) {
    Set s{};
    check_cuda(cudaMalloc(&s.a, 2 * a), "cudaMalloc A");
    check_cuda(cudaMalloc(&s.b, 2 * b), "cudaMalloc B");
    check_cuda(cudaMalloc(&s.d, 2 * d), "cudaMalloc D");
    fill_uniform_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(s.a), a, 3 * i + 1);
    fill_uniform_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(s.b), b, 3 * i + 2);
    check_cuda(cudaMemset(s.d, 0xFF, 2 * d), "poison D");
    sets_.push_back(s);
  }
  check_cuda(cudaDeviceSynchronize(), "filling operands");
}

OperandSets::~OperandSets() {
  for (Set& s : sets_) {
    cudaFree(s.a);
    cudaFree(s.b);
    cudaFree(s.d);
  }
}

// Storage (docs/design.md §3): X, dY row-major [tokens, features]; W row-major [out, in].
// fwd:   A = X [M,K] K-major,            B = W [N,K] K-major
// dgrad: A = dY [M,K] K-major,           B = Wᵀ: W is [K,N] row-major, so B is N-major
// wgrad: A = dYᵀ: dY is [K,M], M-major;  B = Xᵀ: X is [K,N], N-major
TensorView OperandSets::a(int i) const {
  return shape_.layout == gemm::OperandLayout::kAmBn
             ? TensorView::matrix_col_major(sets_[i].a, DType::kBF16, shape_.m, shape_.k)
             : TensorView::matrix(sets_[i].a, DType::kBF16, shape_.m, shape_.k);
}
TensorView OperandSets::b(int i) const {
  return shape_.layout == gemm::OperandLayout::kAkBk
             ? TensorView::matrix(sets_[i].b, DType::kBF16, shape_.n, shape_.k)
             : TensorView::matrix_col_major(sets_[i].b, DType::kBF16, shape_.n, shape_.k);
}
TensorView OperandSets::d(int i) const {
  return TensorView::matrix(sets_[i].d, DType::kBF16, shape_.m, shape_.n);
}

void OperandSets::cublas_gemm(cublasHandle_t handle, int i) const {
  // cuBLAS is column-major: row-major D[M,N] is column-major Dᵀ[N,M] = B[N,K] · Aᵀ[K,M].
  const bool a_k_major = shape_.layout != gemm::OperandLayout::kAmBn;
  const bool b_k_major = shape_.layout == gemm::OperandLayout::kAkBk;
  const float alpha = 1.0f, beta = 0.0f;
  check_cublas(
      cublasGemmEx(handle, b_k_major ? CUBLAS_OP_T : CUBLAS_OP_N,
                   a_k_major ? CUBLAS_OP_N : CUBLAS_OP_T, shape_.n, shape_.m, shape_.k, &alpha,
                   sets_[i].b, CUDA_R_16BF, b_k_major ? shape_.k : shape_.n, sets_[i].a,
                   CUDA_R_16BF, a_k_major ? shape_.k : shape_.m, &beta, sets_[i].d, CUDA_R_16BF,
                   shape_.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

double relative_difference(const void* x, const void* y, std::size_t count) {
  unsigned* bits;
  check_cuda(cudaMalloc(&bits, 8), "cudaMalloc");
  check_cuda(cudaMemset(bits, 0, 8), "cudaMemset");
  max_abs_diff<<<1024, 256>>>(static_cast<const __nv_bfloat16*>(x),
                              static_cast<const __nv_bfloat16*>(y), count, bits, bits + 1);
  unsigned host[2];
  check_cuda(cudaMemcpy(host, bits, 8, cudaMemcpyDeviceToHost), "relative_difference");
  cudaFree(bits);
  float diff, ref;
  std::memcpy(&diff, &host[0], 4);
  std::memcpy(&ref, &host[1], 4);
  return ref > 0 ? diff / ref : diff;
}

std::vector<double> time_launches(const std::function<void(int)>& launch, int reps,
                                  cudaStream_t stream) {
  std::vector<cudaEvent_t> events(2 * reps);
  for (cudaEvent_t& e : events) check_cuda(cudaEventCreate(&e), "cudaEventCreate");
  for (int i = 0; i < reps; ++i) {
    check_cuda(cudaEventRecord(events[2 * i], stream), "cudaEventRecord");
    launch(i);
    check_cuda(cudaEventRecord(events[2 * i + 1], stream), "cudaEventRecord");
  }
  check_cuda(cudaStreamSynchronize(stream), "timed launches");
  std::vector<double> ms(reps);
  for (int i = 0; i < reps; ++i) {
    float t = 0;
    check_cuda(cudaEventElapsedTime(&t, events[2 * i], events[2 * i + 1]), "cudaEventElapsedTime");
    ms[i] = t;
  }
  for (cudaEvent_t e : events) cudaEventDestroy(e);
  return ms;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace coda::bench
