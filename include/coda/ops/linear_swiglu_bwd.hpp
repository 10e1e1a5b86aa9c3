// SPDX-License-Identifier: BSD-3-Clause
// The SwiGLU backward fused into the MLP down-projection's input-gradient GEMM
// (docs/ops-math.md §2.6).
// With the forward Z = [g, u] interleaved by column (linear_swiglu.hpp) and Y = silu(g) · u:
//   dY = dOut · W_down                      dOut: [M, D], W_down: [D, F] (nn.Linear layout)
//   Y  = silu(g) · u                        [M, F] recomputed (for ∂W_down = dOutᵀ · Y), so the
//                                           forward need not keep Y
//   dZ = (dY · u · silu'(g), dY · silu(g))  [M, 2F] interleaved like Z
//   zdz[m] = Σ_k Z[m, k] · dZ[m, k]          [M] fp32: the ⟨z, dz⟩ the preceding RMSNorm's
//                                           backward needs (c = zdz / hidden, ops-math §2.0)
// One GEMM (Z read and dZ written as packed bf16 pairs, one 32-bit element per (g, u)) and one
// small deterministic merge of zdz's per-tile partials; no host sync. Host-visible; bf16 tensors
// with contiguous, 16-byte aligned rows.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

// Bytes of device scratch linear_swiglu_bwd needs for M tokens and an FFN width F.
std::size_t linear_swiglu_bwd_workspace_bytes(std::int64_t m, std::int64_t ffn);

void linear_swiglu_bwd(const TensorView& dZ, const TensorView& Y, const TensorView& zdz,
                       const TensorView& dOut, const TensorView& W_down, const TensorView& Z,
                       void* workspace, std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                       const OpOptions& options = {});

}  // namespace coda::ops
