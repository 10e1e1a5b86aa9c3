// SPDX-License-Identifier: BSD-3-Clause
#include "device/gemm_oracle.hpp"

#include <cstdint>
#include <stdexcept>

#include <cublas_v2.h>

#include "device/device_buffer.hpp"
#include "reference/bf16.hpp"

namespace coda::testing {
namespace {

__global__ void ref64_kernel(int m, int n, int k, const float* a, const float* b, double alpha,
                             double* out) {
  const std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (idx >= std::int64_t(m) * n) return;
  const int i = idx / n, j = idx % n;
  double acc = 0.0;
  for (int p = 0; p < k; ++p)
    acc += double(a[std::int64_t(i) * k + p]) * double(b[std::int64_t(j) * k + p]);
  out[idx] = alpha * acc;
}

std::vector<std::uint16_t> to_bits(const std::vector<float>& v) {
  std::vector<std::uint16_t> bits(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) bits[i] = ref::float_to_bf16_bits(v[i]);
  return bits;
}

}  // namespace

std::vector<double> gemm_ref64(int m, int n, int k, const std::vector<float>& a,
                               const std::vector<float>& b, float alpha) {
  DeviceBuffer da(a.size() * 4), db(b.size() * 4), out(std::size_t(m) * n * 8);
  da.upload(a);
  db.upload(b);
  CODA_CHECK_CUDA(cudaMemset(out.get(), 0, out.bytes()));  // every byte defined (initcheck)
  const std::int64_t count = std::int64_t(m) * n;
  ref64_kernel<<<(count + 255) / 256, 256>>>(m, n, k, da.get<float>(), db.get<float>(), alpha,
                                             out.get<double>());
  CODA_CHECK_CUDA(cudaGetLastError());
  return out.download<double>();
}

std::vector<float> gemm_cublas_f32(int m, int n, int k, const std::vector<float>& a,
                                   const std::vector<float>& b, float alpha) {
  DeviceBuffer da(a.size() * 2), db(b.size() * 2), out(std::size_t(m) * n * 4);
  da.upload(to_bits(a));
  db.upload(to_bits(b));
  // Zeroed first: with β = 0 cuBLAS writes every element of D, but compute-sanitizer initcheck
  // flagged the copy back as reading uninitialized device memory (issue 14). Defining every byte
  // before the GEMM makes the oracle clean under initcheck whichever way cuBLAS stores D.
  CODA_CHECK_CUDA(cudaMemset(out.get(), 0, out.bytes()));
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate");
  const float beta = 0.0f;
  // Row-major D[M,N] = A[M,K]·B[N,K]ᵀ is column-major Dᵀ[N,M] = B·Aᵀ.
  cublasStatus_t st = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, db.get(),
                                   CUDA_R_16BF, k, da.get(), CUDA_R_16BF, k, &beta, out.get(),
                                   CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  cublasDestroy(handle);
  if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasGemmEx failed");
  CODA_CHECK_CUDA(cudaDeviceSynchronize());
  return out.download<float>();
}

std::vector<float> random_bf16_matrix(long rows, long cols, std::mt19937_64& rng, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(std::size_t(rows) * cols);
  for (float& x : v) x = ref::round_to_bf16(dist(rng));
  return v;
}

}  // namespace coda::testing
