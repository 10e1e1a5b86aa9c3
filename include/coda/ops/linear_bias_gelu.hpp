// SPDX-License-Identifier: BSD-3-Clause
// The GPT-2 / BERT MLP up-projection with its bias and tanh GELU in the epilogue, and the GELU's
// backward in the next linear's input-gradient GEMM (docs/ops-math.md §2.11).
// Forward (one GEMM):
//   Pre = X · Wᵀ + b                 [M, N] bf16, optional: saved for the backward (pass a
//                                    TensorView with null data and it is never written)
//   Y   = GELU_tanh(X · Wᵀ + b)      [M, N] bf16, from the fp32 pre-activation
// with GELU_tanh(x) = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))), PyTorch's
// F.gelu(x, approximate="tanh"). X: [M, K], W: [N, K] (nn.Linear layout), b: [N], all bf16.
// Backward, with dOut the gradient of the next linear's output Out = Y · W_downᵀ (one GEMM and one
// small deterministic merge; no host sync):
//   dY    = dOut · W_down            dOut: [M, D], W_down: [D, N] (nn.Linear layout)
//   dPre  = dY ⊙ GELU_tanh'(Pre)     [M, N] bf16: the gradient of X · Wᵀ + b, for ∂W = dPreᵀ · X
//                                    and ∂X = dPre · W (plain GEMMs)
//   dbias = Σ_m dPre                 [N] fp32, summed from the fp32 dPre before its bf16 rounding
// Host-visible; bf16 tensors with contiguous, 16-byte aligned rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

void linear_bias_gelu(const TensorView& Y, const TensorView& Pre, const TensorView& X,
                      const TensorView& W, const TensorView& bias, cudaStream_t stream = nullptr,
                      const OpOptions& options = {});

// Bytes of device scratch linear_bias_gelu_bwd needs for M tokens and N features (W's rows).
std::size_t linear_bias_gelu_bwd_workspace_bytes(std::int64_t m, std::int64_t n);

// dPre: [M, N] bf16; dbias: [N] fp32; dOut: [M, D] bf16; W_down: [D, N] bf16; Pre: [M, N] bf16.
void linear_bias_gelu_bwd(const TensorView& dPre, const TensorView& dbias, const TensorView& dOut,
                          const TensorView& W_down, const TensorView& Pre, void* workspace,
                          std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                          const OpOptions& options = {});

}  // namespace coda::ops
