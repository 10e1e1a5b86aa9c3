// SPDX-License-Identifier: BSD-3-Clause
#include "gemm_variants.hpp"

#include <algorithm>
#include <cmath>

namespace coda::bench {

std::string choice_name(const gemm::KernelChoice& choice) {
  return std::string(gemm::to_string(choice.config)) + " " + gemm::to_string(choice.raster) +
         " s" + std::to_string(choice.swizzle) +
         (gemm::is_stream_k(choice.config)
              ? std::string(" ") + gemm::to_string(choice.decomposition) : "");
}

Timed coda_variant(const OperandSets& ops, const gemm::KernelChoice& choice, cudaStream_t stream,
                   std::vector<std::shared_ptr<void>>& keep_alive) {
  gemm::GemmOptions options;
  options.choice = choice;
  std::size_t ws = gemm::workspace_bytes(ops.d(0), ops.a(0), ops.b(0), options);
  if (ws) {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, ws), "cudaMalloc workspace");
    keep_alive.emplace_back(p, [](void* q) { cudaFree(q); });
    options.workspace = p;
    options.workspace_bytes = ws;
  }
  return {choice_name(choice), [&ops, options, stream](int set) {
            gemm::gemm(ops.d(set), ops.a(set), ops.b(set), options, stream);
          }};
}

Timed cublas_variant(const OperandSets& ops, cublasHandle_t handle) {
  return {"cublas", [&ops, handle](int set) { ops.cublas_gemm(handle, set); }};
}

double check_against_cublas(const OperandSets& ops, const Timed& coda, cublasHandle_t handle,
                            const GemmShape& s) {
  const std::size_t count = std::size_t(s.m) * s.n;
  DeviceAlloc expected(2 * count);
  // The launches go to the bench's non-blocking stream, which does not order against the legacy
  // stream of cudaMemcpy/cudaMemset: synchronise the device between the steps.
  ops.cublas_gemm(handle, 0);
  check_cuda(cudaDeviceSynchronize(), "cuBLAS launch");
  check_cuda(cudaMemcpy(expected.get(), ops.d(0).data, 2 * count, cudaMemcpyDeviceToDevice), "copy");
  check_cuda(cudaMemset(ops.d(0).data, 0xFF, 2 * count), "poison");
  check_cuda(cudaDeviceSynchronize(), "poison");
  coda.launch(0);
  check_cuda(cudaDeviceSynchronize(), "coda launch");
  return relative_difference(ops.d(0).data, expected.get(), count);
}

int reps_for(double est_ms, double budget_ms, int lo, int hi) {
  return std::clamp(static_cast<int>(std::ceil(budget_ms / std::max(est_ms, 1e-3))), lo, hi);
}

}  // namespace coda::bench
