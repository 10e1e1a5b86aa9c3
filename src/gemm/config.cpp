// SPDX-License-Identifier: BSD-3-Clause
// Names of the kernel-menu enums (error messages, benchmark tables, the tuned-table generator).
#include "coda/gemm/config.hpp"

#include <cstddef>
#include <string_view>

namespace coda::gemm {

const char* to_string(OperandLayout layout) {
  switch (layout) {
    case OperandLayout::kAkBk: return "AkBk";
    case OperandLayout::kAkBn: return "AkBn";
    case OperandLayout::kAmBn: return "AmBn";
  }
  return "?";
}

namespace {
struct ConfigFacts {
  const char* name;
  const char* identifier;
  TileGeometry geometry;
  bool stream_k;
  bool pingpong;
  bool overlap;
};
constexpr ConfigFacts kConfigs[] = {
#define CODA_TILE_CONFIG_FACTS(id, name, tm, tn, cm, cn, schedule, scheduler) \
  {name, #id, {tm, tn, cm, cn}, std::string_view(#scheduler) == "StreamK",     \
   std::string_view(#schedule) == "Pingpong", std::string_view(#schedule) == "OverlapCooperative"},
    CODA_TILE_CONFIGS(CODA_TILE_CONFIG_FACTS)
#undef CODA_TILE_CONFIG_FACTS
};
static_assert(sizeof(kConfigs) / sizeof(kConfigs[0]) == std::size_t(kNumTileConfigs));

bool known(TileConfig config) { return int(config) < kNumTileConfigs; }
}  // namespace

const char* to_string(TileConfig config) {
  return known(config) ? kConfigs[int(config)].name : "?";
}

const char* identifier(TileConfig config) {
  return known(config) ? kConfigs[int(config)].identifier : "?";
}

TileGeometry geometry(TileConfig config) {
  return known(config) ? kConfigs[int(config)].geometry : TileGeometry{128, 256, 1, 1};
}

EpilogueTileGeometry epilogue_geometry(TileConfig config) {
  const TileGeometry g = geometry(config);
  if (known(config) && kConfigs[int(config)].overlap) return {64, 128};
  return {g.tile_m, g.tile_n};
}

const char* to_string(RasterOrder raster) {
  switch (raster) {
    case RasterOrder::kHeuristic: return "heuristic";
    case RasterOrder::kAlongM: return "along_m";
    case RasterOrder::kAlongN: return "along_n";
  }
  return "?";
}

const char* to_string(Decomposition decomposition) {
  switch (decomposition) {
    case Decomposition::kHeuristic: return "heuristic";
    case Decomposition::kDataParallel: return "data_parallel";
    case Decomposition::kStreamK: return "stream_k";
  }
  return "?";
}

bool is_stream_k(TileConfig config) { return known(config) && kConfigs[int(config)].stream_k; }

bool is_pingpong(TileConfig config) { return known(config) && kConfigs[int(config)].pingpong; }

}  // namespace coda::gemm
