// SPDX-License-Identifier: BSD-3-Clause
// The small merge kernels that finish partial reductions (partial_reduction.hpp), and the partial
// buffer geometry for a kernel config. Deterministic: each output sums its partials in tile order.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "coda/gemm/config.hpp"

namespace coda::epilogue {

// Partials of one reduction: `tiles` slices of `padded` floats (slice t holds tile t's partials).
struct PartialLayout {
  int tiles = 0;
  std::int64_t padded = 0;
  std::int64_t floats() const { return tiles * padded; }
};

// Σx² per row of an X of `width` features, in partials per N-tile of the GEMM that produced X:
// the deferred RMSNorm's statistic, one type from the op API (ops::RowNormStats::sums) through the
// programs' params (RstdRowScaleParams) to the node that folds it into rstd (row_rstd.hpp).
struct SumSquaresPartials {
  const float* partials = nullptr;  // layout.floats() floats
  PartialLayout layout{};
  int width = 0;
};

// Per-row partials of an M×N output computed with `config`: tiles = ceil(N / tile_N),
// padded = round_up(M, tile_M). Per-col partials: tiles = ceil(M / tile_M), padded = round_up(N,
// tile_N).
PartialLayout per_row_partial_layout(gemm::TileConfig config, int m, int n);
PartialLayout per_col_partial_layout(gemm::TileConfig config, int m, int n);

// The floats per-row (per-col) partials of an M×N output need under any kernel config: the most
// tiles (the smallest tile) times M (N) padded to a multiple of every config's tile along it.
// What a workspace sized before the kernel is chosen must hold (host test
// PartialLayouts.AnyConfigHoldsEveryProgramConfig).
struct AnyConfigTiling {
  std::int64_t tile;      // the smallest tile extent across (per-row partials: tile N)
  std::int64_t multiple;  // the least common multiple of every tile extent along (per-row: tile M)
};
AnyConfigTiling per_row_partial_tiling_any_config();
AnyConfigTiling per_col_partial_tiling_any_config();
std::int64_t per_row_partial_floats_any_config(std::int64_t m, std::int64_t n);
std::int64_t per_col_partial_floats_any_config(std::int64_t m, std::int64_t n);

// out[i] = Σ_t partials[t·padded + i] for i < count (fp32, tile order).
void merge_partial_sums(const float* partials, PartialLayout layout, int count, float* out,
                        cudaStream_t stream = nullptr);

// rstd[m] = 1 / sqrt(Σ_t partials[t·padded + m] / width + eps): RMSNorm's statistic from the
// Σx² partials of the GEMM that produced x (width = the normalised dimension).
void rstd_from_partials(const float* partials, PartialLayout layout, int rows, int width, float eps,
                        float* rstd, cudaStream_t stream = nullptr);

// lse[m] = log Σ_t exp(partials[t·padded + m]): the row log-sum-exp from OnlineLse's per-tile
// partials (online_lse.hpp); −inf when every partial is −inf, +inf when one is (and none NaN),
// NaN when one is NaN (torch.logsumexp's results; lse_math.hpp).
void merge_lse_partials(const float* partials, PartialLayout layout, int rows, float* lse,
                        cudaStream_t stream = nullptr);

}  // namespace coda::epilogue
