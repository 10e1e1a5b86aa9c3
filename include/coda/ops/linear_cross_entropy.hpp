// SPDX-License-Identifier: BSD-3-Clause
// The LM head with cross-entropy, forward, loss only (docs/ops-math.md §2.5): logits = X · Wᵀ never
// leave registers (soft-capped in the epilogue when ce.softcap > 0). The GEMM's epilogue keeps a
// running log Σ exp per (row, vocabulary tile) and picks out the target logit (OnlineLse); a small
// kernel merges the tiles and finishes the loss:
//   lse[m]  = log Σ_v exp(logit[m, v])                        (fp32, saved for the backward)
//   loss[m] = lse[m] − logit[m, target[m]] + z_loss · lse[m]²  (0 where target = ignore_index)
// reduced as none ([M]), sum or mean over non-ignored tokens (a scalar; mean of none is NaN,
// as PyTorch). Non-finite logits as PyTorch: lse as torch.logsumexp (NaN, or +inf for a +inf
// logit), the row's loss and gradient NaN as F.cross_entropy's (docs/numerics.md).
// Deterministic: no atomics. Extra memory: linear_cross_entropy_workspace_bytes — O(M · V / 128)
// floats, never M × V. Host-visible.
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
  // fwd_bwd only: rows per chunk (a multiple of 128), 0: the fewest equal chunks of ≤ ~2 GiB of bf16 logits.
  std::int64_t chunk_rows = 0;
  // Check every target first (one small kernel, then a stream synchronize: for debugging, not
  // during CUDA graph capture) and throw coda::Error naming the first row out of range, before
  // anything of the op runs. Off: such a row's loss is NaN (the mean with it).
  bool validate_targets = false;
};

// Bytes of device scratch linear_cross_entropy needs for M tokens and a vocabulary of V.
std::size_t linear_cross_entropy_workspace_bytes(std::int64_t m, std::int64_t v);

// X: [M, H] bf16; W: [V, H] bf16 (nn.Linear layout); targets: [M] int32 or int64, each in [0, V)
// or ignore_index (others give a NaN loss, or coda::Error with ce.validate_targets);
// loss: fp32, [M] for Reduction::kNone, [1] otherwise; lse: [M] fp32.
void linear_cross_entropy(const TensorView& loss, const TensorView& lse, const TensorView& X,
                          const TensorView& W, const TensorView& targets,
                          const CrossEntropyOptions& ce, void* workspace,
                          std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                          const OpOptions& options = {});

// Forward and backward in one call, for the usual training step where the loss is the graph's
// output and its upstream gradient is known up front (alpha; 1 when empty). Besides loss and lse:
//   dlogits = a[m] · (softmax · (1 + 2·z_loss·lse) − onehot(target)) · (1 − (y / softcap)²)
//             a[m] = α / count (mean over non-ignored tokens), α (sum) or α[m] (none: a per-token
//             upstream gradient); 0 where target = ignore_index
//   dX  = dlogits · W           [M, H] bf16
//   dW  = dlogitsᵀ · X          [V, H] fp32, or added to dW (accumulate_dW: micro-batches)
//   zdz = Σ_v logit · dlogit    [M] fp32, raw (pre-soft-cap) logits: the final RMSNorm backward's
//                               ⟨z, dz⟩ (linear_rmsnorm_bwd); optional
// dlogits is never whole: rows go in chunks of ≤ ~2 GiB of bf16 logits (workspace), each chunk one
// logits GEMM (the forward's, with the online lse), one element-wise pass that turns the logits
// into dlogits in place, a dgrad GEMM into dX's rows and a wgrad GEMM that reduce-adds into dW
// (the first chunk's stores dW unless accumulate_dW: no zero-fill pass).
// Deterministic; no host sync.
struct CrossEntropyGrads {
  TensorView dX;               // [M, H] bf16
  TensorView dW;               // [V, H] fp32, contiguous rows
  bool accumulate_dW = false;  // add to dW instead of overwriting it
  TensorView zdz;              // [M] fp32, or empty
  TensorView alpha;            // [1] fp32 device scalar (sum/mean) or [M] (none), or empty: 1
};

std::size_t linear_cross_entropy_fwd_bwd_workspace_bytes(std::int64_t m, std::int64_t v,
                                                         std::int64_t chunk_rows = 0);

void linear_cross_entropy_fwd_bwd(const TensorView& loss, const TensorView& lse,
                                  const CrossEntropyGrads& grads, const TensorView& X,
                                  const TensorView& W, const TensorView& targets,
                                  const CrossEntropyOptions& ce, void* workspace,
                                  std::size_t workspace_bytes, cudaStream_t stream = nullptr,
                                  const OpOptions& options = {});

}  // namespace coda::ops
