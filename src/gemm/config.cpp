// SPDX-License-Identifier: BSD-3-Clause
// Names of the kernel-menu enums (error messages, benchmark tables, the tuned-table generator).
#include "coda/gemm/config.hpp"

namespace coda::gemm {

const char* to_string(OperandLayout layout) {
  switch (layout) {
    case OperandLayout::kAkBk: return "AkBk";
    case OperandLayout::kAkBn: return "AkBn";
    case OperandLayout::kAmBn: return "AmBn";
  }
  return "?";
}

const char* to_string(TileConfig config) {
  switch (config) {
    case TileConfig::kCoop128x256Cluster1x2: return "coop_128x256_1x2";
    case TileConfig::kCoop128x256Cluster2x1: return "coop_128x256_2x1";
    case TileConfig::kCoop256x128Cluster1x2: return "coop_256x128_1x2";
    case TileConfig::kStreamKCoop128x256Cluster2x1: return "skcoop_128x256_2x1";
    case TileConfig::kPingpong128x128Cluster2x1: return "pingpong_128x128_2x1";
  }
  return "?";
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

bool is_stream_k(TileConfig config) { return config == TileConfig::kStreamKCoop128x256Cluster2x1; }

}  // namespace coda::gemm
