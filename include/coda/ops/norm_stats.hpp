// SPDX-License-Identifier: BSD-3-Clause
// RowNormStats: the RMSNorm statistic of a tensor X as its producer leaves it — Σx² per row, in
// partials per N-tile of the producing GEMM — and the ops that make and consume it:
//   linear_residual_rms (linear_residual_rms.hpp) and rms_norm_stats (below) produce it;
//   linear_rmsnorm, linear_rmsnorm_swiglu, linear_rmsnorm_rope consume it: they fold it into
//   rstd[m] = 1 / sqrt(Σx²/width + eps) in their epilogue (RowRstd), with no merge launch.
// Host-visible.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "coda/epilogue/merge.hpp"
#include "coda/tensor.hpp"

namespace coda::ops {

struct RowNormStats {
  float* partials = nullptr;  // device buffer of `capacity` floats (norm_stats_floats)
  std::int64_t capacity = 0;
  // Written by the producer: where each tile's partials are, and the number of features summed.
  epilogue::PartialLayout layout{};
  int width = 0;

  // What a consumer reads (its RstdRowScaleParams): the same partials, layout and width.
  epilogue::SumSquaresPartials sums() const { return {partials, layout, width}; }
};

// Floats a RowNormStats buffer needs for an M × N producer, whatever kernel config it runs.
std::int64_t norm_stats_floats(std::int64_t m, std::int64_t n);

// The first block's norm (no producing GEMM): H = X ⊙ w (bf16) and Σx² per row of fp32 X into
// `stats` (one partial per row). X, H: [M, N] bf16, rows contiguous; w: [N] bf16.
void rms_norm_stats(const TensorView& H, RowNormStats& stats, const TensorView& X,
                    const TensorView& norm_weight, cudaStream_t stream = nullptr);

// The layout linear_residual_rms leaves in `stats` at M × N × K with default options (its kernel
// is a pure function of the shape), so a consumer can rebuild a RowNormStats from the buffer alone
// — what the Python package does, whose tensors carry no host-side layout. rms_norm_stats leaves
// {1, M}.
epilogue::PartialLayout linear_residual_rms_stats_layout(std::int64_t m, std::int64_t n,
                                                         std::int64_t k);

}  // namespace coda::ops
