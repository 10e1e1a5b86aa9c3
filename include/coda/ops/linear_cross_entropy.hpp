// SPDX-License-Identifier: BSD-3-Clause
// The LM head with cross-entropy, forward, loss only (coda-anchor §2.5): logits = X · Wᵀ never
// leave registers (soft-capped in the epilogue when ce.softcap > 0). The GEMM's epilogue keeps a running log Σ exp per (row, vocabulary tile) and
// picks out the target logit (OnlineLse); a small kernel merges the tiles and finishes the loss:
//   lse[m]  = log Σ_v exp(logit[m, v])                        (fp32, saved for the backward)
//   loss[m] = lse[m] − logit[m, target[m]] + z_loss · lse[m]²  (0 where target = ignore_index)
// reduced as none ([M]), sum or mean over non-ignored tokens (a scalar; mean of none is NaN,
// as PyTorch). Deterministic: no atomics. Extra memory: linear_cross_entropy_workspace_bytes —
// O(M · V / 128) floats, never M × V. Host-visible.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

enum class Reduction { kNone, kSum, kMean };

struct CrossEntropyOptions {
  std::int64_t ignore_index = -100;
  Reduction reduction = Reduction::kMean;
  float z_loss = 0.0f;   // weight of the z-loss term lse² (PaLM); 0: off
  float softcap = 0.0f;  // > 0: logits ← softcap · tanh(logits / softcap) first (Gemma 2); 0: off
};

// Bytes of device scratch linear_cross_entropy needs for M tokens and a vocabulary of V.
std::size_t linear_cross_entropy_workspace_bytes(std::int64_t m, std::int64_t v);

// X: [M, H] bf16; W: [V, H] bf16 (nn.Linear layout); targets: [M] int32 or int64, each in [0, V)
// or ignore_index (others are not detectable without a host sync: their loss is NaN);
// loss: fp32, [M] for Reduction::kNone, [1] otherwise; lse: [M] fp32.
void linear_cross_entropy(const TensorView& loss, const TensorView& lse, const TensorView& X,
                          const TensorView& W, const TensorView& targets,
                          const CrossEntropyOptions& ce, void* workspace,
                          std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                          const OpOptions& options = {});

}  // namespace coda::ops
