// SPDX-License-Identifier: BSD-3-Clause
// coda::gemm::gemm — the fixed mainloop as a plain GEMM: D[M,N] = α · A[M,K] · B[N,K]ᵀ,
// bf16 operands, fp32 accumulation, bf16 or fp32 D.
#pragma once

#include <cstddef>
#include <optional>

#include <cuda_runtime_api.h>

#include "coda/gemm/config.hpp"
#include "coda/tensor.hpp"

namespace coda::gemm {

struct GemmOptions {
  // α as a device scalar (fp32), read by the kernel: no host sync, capturable. nullptr means 1.
  const float* alpha = nullptr;
  // Override the shape table (benchmarks, tuning, tests). Must name an instantiated kernel.
  std::optional<KernelChoice> choice;
  // Scratch for stream-K partials: at least workspace_bytes(...) bytes, 16-byte aligned, on the
  // device, and not used concurrently by another launch. Not needed when workspace_bytes() is 0.
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// D = α·A·Bᵀ on `stream`. A is M×K, B is N×K, D is M×N (row-major, unit column stride). Which of
// A's and B's modes is contiguous picks the operand layout (see OperandLayout); (A M-major,
// B K-major) is not supported. Every strided mode must be 16-byte aligned (TMA); extents need not
// be. D is written by TMA in whole 16-byte units: when N is not a multiple of 8 (bf16) or 4 (f32),
// columns N .. round_up(N, 16 bytes) − 1 of each row are scratch and may be overwritten (measured
// on H200; tests/device/gemm/gemm_test.cu); nothing past them is touched. Throws coda::Error naming
// the argument and the constraint; on error nothing is launched.
void gemm(const TensorView& D, const TensorView& A, const TensorView& B,
          const GemmOptions& options = {}, cudaStream_t stream = nullptr);

// Bytes of workspace the kernel that gemm() would run for these arguments needs (0 for all but
// stream-K). Validates like gemm(). Host-only, cheap, capturable.
std::size_t workspace_bytes(const TensorView& D, const TensorView& A, const TensorView& B,
                            const GemmOptions& options = {});

}  // namespace coda::gemm
