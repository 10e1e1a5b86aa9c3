// SPDX-License-Identifier: BSD-3-Clause
// Tile configs and raster orders found again by the names coda::gemm::to_string gives them: what a
// tuning file (src/ops/autotune_file.cpp) and a benchmark that forces a kernel by name (the Python
// module's plain GEMM) read back. Host-only.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "coda/gemm/config.hpp"

namespace coda::gemm {

inline constexpr RasterOrder kRasterOrders[] = {RasterOrder::kHeuristic, RasterOrder::kAlongM,
                                                RasterOrder::kAlongN};

// The member of `among` that to_string names `name`, if any.
template <class Enum, std::size_t N>
std::optional<Enum> named(std::string_view name, const Enum (&among)[N]) {
  for (Enum e : among)
    if (name == to_string(e)) return e;
  return std::nullopt;
}

// The tile config, of all of CODA_TILE_CONFIGS, that to_string names `name`, if any.
inline std::optional<TileConfig> tile_config_named(std::string_view name) {
  for (int c = 0; c < kNumTileConfigs; ++c)
    if (name == to_string(TileConfig(c))) return TileConfig(c);
  return std::nullopt;
}

}  // namespace coda::gemm
