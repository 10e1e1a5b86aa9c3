// SPDX-License-Identifier: BSD-3-Clause
#include "coda/epilogue/merge.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "coda/epilogue/lse_math.hpp"
#include "coda/epilogue/partial_math.hpp"
#include "coda/status.hpp"

namespace coda::epilogue {
namespace {

constexpr const char* kWhere = "coda::epilogue";

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

__global__ void merge_kernel(const float* partials, int tiles, std::int64_t padded, int count,
                             float scale, float eps, bool rstd, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float sum = sum_of_partials(partials, tiles, padded, i);
  out[i] = rstd ? rstd_from_sum(sum, scale, eps) : sum;
}

__global__ void merge_lse_kernel(const float* partials, int tiles, std::int64_t padded, int count,
                                 float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  float max = -INFINITY;  // max_nan: a NaN partial makes the row's lse NaN (lse_math.hpp)
  for (int t = 0; t < tiles; ++t) max = max_nan(max, partials[t * padded + i]);
  float sum = 0.0f;
  if (isfinite(max))
    for (int t = 0; t < tiles; ++t) sum += expf(partials[t * padded + i] - max);
  out[i] = lse_of(max, sum);
}

void require_layout(const float* partials, PartialLayout layout, int count, const float* out) {
  require(partials != nullptr, kWhere, "partials: data pointer is null");
  require(out != nullptr, kWhere, "out: data pointer is null");
  require(layout.tiles > 0 && layout.padded >= count && count > 0, kWhere,
          "layout: needs tiles > 0 and padded >= count > 0; got tiles " +
              std::to_string(layout.tiles) + ", padded " + std::to_string(layout.padded) +
              ", count " + std::to_string(count));
}

void check_launch() {
  cudaError_t err = cudaGetLastError();
  require(err == cudaSuccess, kWhere, std::string("merge kernel launch: ") + cudaGetErrorString(err));
}

void launch(const float* partials, PartialLayout layout, int count, float scale, float eps,
            bool rstd, float* out, cudaStream_t stream) {
  require_layout(partials, layout, count, out);
  merge_kernel<<<(count + 255) / 256, 256, 0, stream>>>(partials, layout.tiles, layout.padded,
                                                        count, scale, eps, rstd, out);
  check_launch();
}

}  // namespace

PartialLayout per_row_partial_layout(gemm::TileConfig config, int m, int n) {
  const gemm::EpilogueTileGeometry t = gemm::epilogue_geometry(config);
  return {static_cast<int>((n + t.tile_n - 1) / t.tile_n), round_up(m, t.tile_m)};
}

PartialLayout per_col_partial_layout(gemm::TileConfig config, int m, int n) {
  const gemm::EpilogueTileGeometry t = gemm::epilogue_geometry(config);
  return {static_cast<int>((m + t.tile_m - 1) / t.tile_m), round_up(n, t.tile_n)};
}

namespace {
// The smallest tile extent across and the lcm of the extents along, over every config:
// tile_across gives a config's tile extent along `across` (per-row partials: N), tile_along along
// `along`. A lcm, not the largest rounding up, so that the size is one formula the Python package
// can mirror on symbolic sizes (python/coda/ops.py norm_stats_floats).
template <class TileAcross, class TileAlong>
AnyConfigTiling any_config_tiling(TileAcross tile_across, TileAlong tile_along) {
  AnyConfigTiling tiling{std::numeric_limits<std::int64_t>::max(), 1};
  for (int c = 0; c < gemm::kNumTileConfigs; ++c) {
    const gemm::EpilogueTileGeometry t = gemm::epilogue_geometry(gemm::TileConfig(c));
    tiling.tile = std::min<std::int64_t>(tiling.tile, tile_across(t));
    tiling.multiple = std::lcm<std::int64_t>(tiling.multiple, tile_along(t));
  }
  return tiling;
}

std::int64_t partial_floats(AnyConfigTiling tiling, std::int64_t across, std::int64_t along) {
  return (across + tiling.tile - 1) / tiling.tile * round_up(along, tiling.multiple);
}
}  // namespace

// Fixed by the config list: computed once, not on every op call that sizes a workspace.
AnyConfigTiling per_row_partial_tiling_any_config() {
  static const AnyConfigTiling tiling =
      any_config_tiling([](const gemm::EpilogueTileGeometry& t) { return t.tile_n; },
                        [](const gemm::EpilogueTileGeometry& t) { return t.tile_m; });
  return tiling;
}

AnyConfigTiling per_col_partial_tiling_any_config() {
  static const AnyConfigTiling tiling =
      any_config_tiling([](const gemm::EpilogueTileGeometry& t) { return t.tile_m; },
                        [](const gemm::EpilogueTileGeometry& t) { return t.tile_n; });
  return tiling;
}

std::int64_t per_row_partial_floats_any_config(std::int64_t m, std::int64_t n) {
  return partial_floats(per_row_partial_tiling_any_config(), n, m);
}

std::int64_t per_col_partial_floats_any_config(std::int64_t m, std::int64_t n) {
  return partial_floats(per_col_partial_tiling_any_config(), m, n);
}

void merge_partial_sums(const float* partials, PartialLayout layout, int count, float* out,
                        cudaStream_t stream) {
  launch(partials, layout, count, 1.0f, 0.0f, false, out, stream);
}

void rstd_from_partials(const float* partials, PartialLayout layout, int rows, int width, float eps,
                        float* rstd, cudaStream_t stream) {
  require(width > 0, kWhere, "width: must be positive; got " + std::to_string(width));
  require(eps >= 0.0f, kWhere, "eps: must be non-negative");
  launch(partials, layout, rows, 1.0f / static_cast<float>(width), eps, true, rstd, stream);
}

void merge_lse_partials(const float* partials, PartialLayout layout, int rows, float* lse,
                        cudaStream_t stream) {
  require_layout(partials, layout, rows, lse);
  merge_lse_kernel<<<(rows + 255) / 256, 256, 0, stream>>>(partials, layout.tiles, layout.padded,
                                                           rows, lse);
  check_launch();
}

}  // namespace coda::epilogue
