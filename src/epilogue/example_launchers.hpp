// SPDX-License-Identifier: BSD-3-Clause
// Launchers of the example programs: the primitives composed in ways no op uses (row scale, bias +
// SiLU + column sum, plain activation, residual add, row Σx², the SwiGLU gradient in its own GEMM,
// residual accumulate, cross-entropy partials with D). Tests (tests/device/epilogue) and
// `coda-bench epilogue` run them; their kernels build into the coda_examples library only, so
// libcoda and the Python package do not compile them. Same contract as program_launchers.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include "coda/epilogue/program_params.hpp"
#include "coda/gemm/config.hpp"
#include "coda/tensor.hpp"

namespace coda::epilogue {

// The configs the example programs are compiled for (scripts/instances.py reads this list): one
// Cooperative and one Pingpong tile, so each primitive is tested under both schedules. The ops'
// own tests run every config an op's program is compiled for, Pingpong 128x192 among them.
inline constexpr gemm::TileConfig kExampleConfigs[] = {gemm::TileConfig::kCoop128x256Cluster2x1,
                                                       gemm::TileConfig::kPingpong128x128Cluster2x1};

void row_scale(const TensorView& D, const TensorView& A, const TensorView& B,
               const RowScaleParams& params, gemm::KernelChoice choice,
               cudaStream_t stream = nullptr);

void bias_silu_col_sum(const TensorView& D, const TensorView& A, const TensorView& B,
                       const BiasSiluColSumParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream = nullptr);

void activation(const TensorView& D, const TensorView& A, const TensorView& B,
                const ActivationParams& params, gemm::KernelChoice choice,
                cudaStream_t stream = nullptr);

void residual_add(const TensorView& D, const TensorView& A, const TensorView& B,
                  const ResidualAddParams& params, gemm::KernelChoice choice,
                  cudaStream_t stream = nullptr);

void row_sum_squares(const TensorView& D, const TensorView& A, const TensorView& B,
                     const RowSumSquaresParams& params, gemm::KernelChoice choice,
                     cudaStream_t stream = nullptr);

void swiglu_pairs_grad(const TensorView& D, const TensorView& A, const TensorView& B,
                       const SwiGluPairsGradParams& params, gemm::KernelChoice choice,
                       cudaStream_t stream = nullptr);

// D += A·Bᵀ: D is read as well as written.
void residual_accumulate(const TensorView& D, const TensorView& A, const TensorView& B,
                         const ResidualAccumulateParams& params, gemm::KernelChoice choice,
                         cudaStream_t stream = nullptr);

void cross_entropy_partials(const TensorView& D, const TensorView& A, const TensorView& B,
                            const CrossEntropyPartialsParams& params, gemm::KernelChoice choice,
                            cudaStream_t stream = nullptr);

}  // namespace coda::epilogue
