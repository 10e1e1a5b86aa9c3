// SPDX-License-Identifier: BSD-3-Clause
// Runtime inputs and outputs of the compiled epilogue programs (host-visible; the programs
// themselves are in kernels/coda/programs/). Pointers are device pointers; strides in elements.
#pragma once

#include <cstdint>

#include "coda/epilogue/merge.hpp"
#include "coda/epilogue/rope_table.hpp"

namespace coda::epilogue {

// X = acc + R → D;  Σ X² per (row, N-tile) → sumsq partials;  H = X ⊙ w → normed.
struct ResidualRmsParams {
  const void* residual = nullptr;  // R: bf16 [M, N]
  std::int64_t residual_stride = 0;
  const void* norm_weight = nullptr;  // w: bf16 [N]
  void* normed = nullptr;             // H: bf16 [M, N]
  std::int64_t normed_stride = 0;
  float* sumsq_partials = nullptr;  // per-row partials (partial_reduction.hpp layout)
};

// D = α · r[m] · acc  (the deferred RMSNorm: r = rstd).
struct RowScaleParams {
  const float* alpha = nullptr;      // device scalar
  const float* row_scale = nullptr;  // r: fp32 [M]
};

// Y = silu(acc + b[n]) → D;  Σ_m Y per (column, M-tile) → col partials.
struct BiasSiluColSumParams {
  const void* bias = nullptr;     // b: bf16 [N]
  float* col_partials = nullptr;  // per-col partials (partial_reduction.hpp layout)
};

// One primitive family each, for measuring families on their own (`coda-bench epilogue`):
// D = silu(acc)                                   (element-wise)
struct ActivationParams {};
// D = acc + R                                     (tile load)
struct ResidualAddParams {
  const void* residual = nullptr;  // R: bf16 [M, N]
  std::int64_t residual_stride = 0;
};
// D = acc;  Σ acc² per (row, N-tile) → partials   (partial reduction)
struct RowSumSquaresParams {
  float* sumsq_partials = nullptr;
};

// D = acc → Z (M × N, gate/up interleaved by column);  Y[m, j] = silu(Z[m, 2j]) · Z[m, 2j+1]
// → gated (M × N/2)                               (gated pair, half-width output)
struct SwiGluPairsParams {
  void* gated = nullptr;  // Y: bf16 [M, N/2], 4-byte aligned
  std::int64_t gated_stride = 0;
};
// D = RoPE(acc): pairs (2j, 2j+1) of row m rotated by 2π · position[m] · f[j]   (RoPE pairs)
struct RopeRotateParams {
  const std::int32_t* positions = nullptr;     // [M]
  const RopeFrequency* frequencies = nullptr;  // [N / 2]
};
// The SwiGLU backward core on packed pairs: acc = dY (M × F); (g, u) = packed Z[m, j];
// D = silu(g)·u (Y recomputed);  dZ[m, j] = packed (dY·u·silu'(g), dY·silu(g))   (packed pairs)
struct SwiGluPairsGradParams {
  const void* packed_z = nullptr;    // Z: 32-bit [M, F] (bf16 pairs), 16-byte aligned rows
  std::int64_t packed_z_stride = 0;  // in 32-bit elements
  void* packed_dz = nullptr;         // dZ: 32-bit [M, F]
  std::int64_t packed_dz_stride = 0;
};
// The SwiGLU backward in the down-projection's dgrad (layout AkBn): SwiGluPairsGrad plus
// Σ_j (g·∂g + u·∂u) per (row, N-tile) → zdz partials: ⟨z, dz⟩ of the preceding RMSNorm's output
// projection, which that norm's backward needs.
struct SwiGluBwdParams : SwiGluPairsGradParams {
  float* zdz_partials = nullptr;  // per-row partial layout of this GEMM (M × F)
};
// Y = GELU_tanh(acc + b[n]) → D   (the GPT-2 / BERT MLP up-projection: linear_bias_gelu)
struct BiasGeluParams {
  const void* bias = nullptr;  // b: bf16 [N]
};
// The same, also storing the pre-activation P = acc + b[n] → pre (what the backward reads)
struct BiasGeluSavePreParams : BiasGeluParams {
  void* pre = nullptr;  // P: bf16 [M, N]
  std::int64_t pre_stride = 0;
};
// Its backward in the next linear's dgrad (layout AkBn): acc = dY = dOut · W_down;
// D = dP = dY ⊙ GELU_tanh'(P);  Σ_m dP (fp32, before D's rounding) per (column, M-tile) → partials
struct BiasGeluBwdParams {
  const void* pre = nullptr;  // P: bf16 [M, N], as the forward saved it
  std::int64_t pre_stride = 0;
  float* dbias_partials = nullptr;  // per-col partial layout of this GEMM (M × N)
};
// D = rstd[m] · acc, rstd = 1 / sqrt(Σx² / width + eps) folded from the producing GEMM's Σx²
// partials in registers   (per-row leaf)
struct RstdRowScaleParams {
  SumSquaresPartials sums;  // width: the features normalised
  float eps = 0.0f;
};
// Z = rstd[m] · acc → D;  Y = silu(Z[:, 2j]) · Z[:, 2j+1] → gated   (RMSNorm + SwiGLU)
struct RstdSwiGluPairsParams {
  RstdRowScaleParams rstd;
  SwiGluPairsParams gated;
};
// D = RoPE(rstd[m] · acc)   (RMSNorm + RoPE)
struct RstdRopeRotateParams {
  RstdRowScaleParams rstd;
  RopeRotateParams rope;
};
// D = QK-norm then RoPE: for each Q / K head of acc (head_dim columns, adjacent-pair RoPE order)
// y = RoPE(x · rsqrt(mean(x²) + eps) ⊙ γ);  V columns pass through       (reduce, then rewrite)
struct QkNormRopeParams {
  RopeRotateParams rope;
  const void* q_norm_weight = nullptr;  // γ_q: bf16 [head_dim], in the permuted (pair) order
  const void* k_norm_weight = nullptr;  // γ_k: bf16 [head_dim]
  int q_columns = 0;                    // q_heads · head_dim
  int qk_columns = 0;                   // (q_heads + kv_heads) · head_dim
  int head_dim = 128;                   // 64 or 128
  float eps = 1e-6f;
};
// D = QK-norm + RoPE of rstd[m] · acc (RMSNorm → fused QKV projection → QK-norm → RoPE)
struct RstdQkNormRopeParams {
  RstdRowScaleParams rstd;
  QkNormRopeParams qk;
};
// The same two, also storing the projection before the norm → pre (what the QK-norm backward
// needs: the norm's input, as the standard model saves it)
struct QkNormRopeSavePreParams {
  QkNormRopeParams qk;
  void* pre = nullptr;  // bf16 [M, N]; its V columns equal D's
  std::int64_t pre_stride = 0;
};
struct RstdQkNormRopeSavePreParams {
  RstdRowScaleParams rstd;
  QkNormRopeSavePreParams qk;
};
// The RMSNorm backward in the dgrad GEMM of the linear that consumed the norm (layout AkBn):
// acc = dZ · W;  G = α · acc;  u = X · r (r from the forward's Σx² partials);  c = zdz · (1/D);
// D = dX = r · (G ⊙ w − u · c);  N = u ⊙ w → normed;  Σ_m G ⊙ u per (column, M-tile) → dw partials
struct RmsNormBwdParams {
  const float* alpha = nullptr;  // device scalar; null: 1
  RstdRowScaleParams rstd;       // r[m]: X's Σx² partials as the forward left them, width = D
  const void* x = nullptr;       // X: bf16 [M, D], the norm's saved input
  std::int64_t x_stride = 0;
  const void* norm_weight = nullptr;  // w: bf16 [D]
  const float* zdz = nullptr;         // [M] Σ_k z·dz from the linear's output side
  void* normed = nullptr;             // N: bf16 [M, D]
  std::int64_t normed_stride = 0;
  float* dw_partials = nullptr;  // per-col partial layout of this GEMM (M × D)
};
// The same with dX accumulated into D by TMA reduce-add (the residual stream's gradient).
struct RmsNormBwdAccumulateParams : RmsNormBwdParams {};
// D += acc by TMA reduce-add (residual-gradient accumulation)
struct ResidualAccumulateParams {};
// The same for an fp32 D in the weight-gradient layout (AmBn): ∂W += Aᵀ·B across chunks of tokens.
struct WeightGradAccumulateParams : ResidualAccumulateParams {};
// D = acc (logits);  lse_partials[t, m] = log Σ_{n in N-tile t} exp(acc);
// target_logits[m] = acc[m, target[m]]   (online state)
struct CrossEntropyPartialsParams {
  float* lse_partials = nullptr;  // per-row partial layout (per_row_partial_layout of this GEMM)
  std::int64_t lse_padded = 0;    // its PartialLayout::padded
  const void* targets = nullptr;  // [M] int32 or int64
  bool targets_int64 = false;
  std::int64_t ignore_index = -100;
  float* target_logits = nullptr;  // [M]
  float softcap = 0.0f;            // > 0: logits ← softcap · tanh(logits / softcap) first
};

// The gated programs with no D: only Y leaves the kernel (Z is not stored).
struct SwiGluPairsNoDParams : SwiGluPairsParams {};
struct RstdSwiGluPairsNoDParams : RstdSwiGluPairsParams {};

// The same with no D: the logits never leave registers (loss-only cross-entropy).
struct CrossEntropyLossParams : CrossEntropyPartialsParams {};

}  // namespace coda::epilogue
