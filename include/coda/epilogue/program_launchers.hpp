// SPDX-License-Identifier: BSD-3-Clause
// Launchers for the compiled epilogue programs (bf16 D; the forward layout unless said): validate
// the GEMM operands like coda::gemm::gemm, then run the program's kernel for `config`.
#pragma once

#include <cuda_runtime_api.h>

#include "coda/epilogue/program_params.hpp"
#include "coda/gemm/config.hpp"
#include "coda/ops/op_key.hpp"
#include "coda/tensor.hpp"

namespace coda::epilogue {

// The configs the programs are compiled for (scripts/instances.py reads this list): one
// Cooperative, two Pingpong and the overlapped Cooperative, the configs an op's options.choice
// may name and the autotuner times. A program with an fp32 D compiles the first only; one whose
// epilogue subtile spans whole heads (QK-norm, 128 columns) only those whose tile N that subtile
// divides.
inline constexpr gemm::TileConfig kProgramConfigs[] = {
    gemm::TileConfig::kCoop128x256Cluster2x1, gemm::TileConfig::kPingpong128x128Cluster2x1,
    gemm::TileConfig::kPingpong128x192Cluster2x1, gemm::TileConfig::kOverlapCoop128x256Cluster2x1};
// Whether the program of `op` (its row of CODA_OP_KEYS) is compiled for `config`.
bool has_program_instance(ops::OpKey op, gemm::TileConfig config);

void residual_rms(const TensorView& D, const TensorView& A, const TensorView& B,
                  const ResidualRmsParams& params, gemm::KernelChoice choice,
                  cudaStream_t stream = nullptr);

void swiglu_pairs(const TensorView& D, const TensorView& A, const TensorView& B,
                  const SwiGluPairsParams& params, gemm::KernelChoice choice,
                  cudaStream_t stream = nullptr);
void rope_rotate(const TensorView& D, const TensorView& A, const TensorView& B,
                 const RopeRotateParams& params, gemm::KernelChoice choice,
                 cudaStream_t stream = nullptr);
void rstd_row_scale(const TensorView& D, const TensorView& A, const TensorView& B,
                    const RstdRowScaleParams& params, gemm::KernelChoice choice,
                    cudaStream_t stream = nullptr);

void rstd_swiglu_pairs(const TensorView& D, const TensorView& A, const TensorView& B,
                       const RstdSwiGluPairsParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream = nullptr);
void rstd_rope_rotate(const TensorView& D, const TensorView& A, const TensorView& B,
                      const RstdRopeRotateParams& params, gemm::KernelChoice choice,
                      cudaStream_t stream = nullptr);

// N must be a multiple of params.head_dim (64 or 128), Q and K ranges multiples of it.
void qk_norm_rope(const TensorView& D, const TensorView& A, const TensorView& B,
                  const QkNormRopeParams& params, gemm::KernelChoice choice,
                  cudaStream_t stream = nullptr);
void rstd_qk_norm_rope(const TensorView& D, const TensorView& A, const TensorView& B,
                       const RstdQkNormRopeParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream = nullptr);
// The same, also storing the norm's input → params.pre (bf16 M × N).
void qk_norm_rope_save_pre(const TensorView& D, const TensorView& A, const TensorView& B,
                           const QkNormRopeSavePreParams& params, gemm::KernelChoice choice,
                           cudaStream_t stream = nullptr);
void rstd_qk_norm_rope_save_pre(const TensorView& D, const TensorView& A, const TensorView& B,
                                const RstdQkNormRopeSavePreParams& params,
                                gemm::KernelChoice choice, cudaStream_t stream = nullptr);

// The three GELU programs (linear_bias_gelu), one launcher for their Params (compiled for these
// three only): BiasGeluParams, D = GELU_tanh(A·Bᵀ + b); BiasGeluSavePreParams, the same and
// A·Bᵀ + b → params.pre (bf16 M × N); BiasGeluBwdParams, in the dgrad layout,
// D = dP = (A·Bᵀ) ⊙ GELU_tanh'(params.pre) and Σ_m dP → params.dbias_partials.
template <class Params>
void bias_gelu(const TensorView& D, const TensorView& A, const TensorView& B, const Params& params,
               gemm::KernelChoice choice, cudaStream_t stream = nullptr);

// No D: A·Bᵀ stays in registers; only params' outputs are written (M = A's rows, N = B's rows).
void cross_entropy_loss_partials(const TensorView& A, const TensorView& B,
                                 const CrossEntropyLossParams& params, gemm::KernelChoice choice,
                                 cudaStream_t stream = nullptr);
// Dgrad layout (A K-major, B N-major: dY = dOut · W_down).
void swiglu_bwd(const TensorView& D, const TensorView& A, const TensorView& B,
                const SwiGluBwdParams& params, gemm::KernelChoice choice,
                cudaStream_t stream = nullptr);
// Dgrad layout. D = dX [M, D] (written, or reduce-added into for the accumulate variant).
void rms_norm_bwd(const TensorView& D, const TensorView& A, const TensorView& B,
                  const RmsNormBwdParams& params, gemm::KernelChoice choice,
                  cudaStream_t stream = nullptr);
void rms_norm_bwd_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                             const RmsNormBwdAccumulateParams& params, gemm::KernelChoice choice,
                             cudaStream_t stream = nullptr);
// fp32 D += A·Bᵀ in the wgrad layout (A M-major, B N-major: ∂W += dYᵀ·X), Cooperative only.
void weight_grad_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                            const WeightGradAccumulateParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream = nullptr);
void swiglu_pairs_no_d(const TensorView& A, const TensorView& B, const SwiGluPairsNoDParams& params,
                       gemm::KernelChoice choice, cudaStream_t stream = nullptr);
void rstd_swiglu_pairs_no_d(const TensorView& A, const TensorView& B,
                            const RstdSwiGluPairsNoDParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream = nullptr);

}  // namespace coda::epilogue
