// SPDX-License-Identifier: BSD-3-Clause
// The menu of fixed-mainloop kernels: operand layouts, tile/cluster/schedule configs, and the
// runtime scheduler settings (raster order, swizzle, stream-K decomposition) chosen per shape.
#pragma once

#include <cstdint>

namespace coda::gemm {

// Which mode of A[M,K] and B[N,K] is contiguous. D[M,N] is always row-major.
//   kAkBk: A K-major, B K-major  (forward:  Y  = X · Wᵀ,   B = W)
//   kAkBn: A K-major, B N-major  (dgrad:    dX = dY · W,   B = Wᵀ view)
//   kAmBn: A M-major, B N-major  (wgrad:    dW = dYᵀ · X,  A = dYᵀ view, B = Xᵀ view)
enum class OperandLayout : std::uint8_t { kAkBk, kAkBn, kAmBn };

// Tile (M×N; K-block 64, 32 under OverlapCooperative: gemm/kernel.hpp), cluster and schedule,
// declared once here: the enum, the names, the tile-grid arithmetic (choose_config.cpp, merge.cu),
// the CUTLASS types (gemm/kernel.hpp) and the compiled kernels (scripts/instances.py) come from it.
//   X(enumerator, name, tile M, tile N, cluster M, cluster N, schedule, tile scheduler)
// Schedules (gemm/kernel.hpp): Cooperative (two consumer warp groups split the tile along M),
// Pingpong (one tile per warp group). Menu from the H100 sweep of 2026-11-21 (docs/design.md §10):
// with raster/swizzle per shape, the first five were the finalists on 16 of the 17 Llama-3 shapes.
// Pingpong 128x192 (2026-11-25, §10): the wide-N forward shapes' fastest plain GEMM on the H100
// by 3-7 % and, as a Pingpong kernel, one whose epilogue overlaps the other warp group's mainloop.
// A config here costs a kernel per operand layout in each plain-GEMM unit: it must win somewhere
// (the nineteenth session's split-N tiles did not, §10).
#define CODA_TILE_CONFIGS(X)                                                                   \
  X(kCoop128x256Cluster1x2, "coop_128x256_1x2", 128, 256, 1, 2, Cooperative, Persistent)       \
  X(kCoop128x256Cluster2x1, "coop_128x256_2x1", 128, 256, 2, 1, Cooperative, Persistent)       \
  X(kCoop256x128Cluster1x2, "coop_256x128_1x2", 256, 128, 1, 2, Cooperative, Persistent)       \
  X(kStreamKCoop128x256Cluster2x1, "skcoop_128x256_2x1", 128, 256, 2, 1, Cooperative, StreamK) \
  X(kPingpong128x128Cluster2x1, "pingpong_128x128_2x1", 128, 128, 2, 1, Pingpong, Persistent)  \
  X(kPingpong128x192Cluster2x1, "pingpong_128x192_2x1", 128, 192, 2, 1, Pingpong, Persistent)  \
  X(kOverlapCoop128x256Cluster2x1, "ovcoop_128x256_2x1", 128, 256, 2, 1, OverlapCooperative,   \
    Persistent)

enum class TileConfig : std::uint8_t {
#define CODA_TILE_CONFIG_ENUMERATOR(id, name, tm, tn, cm, cn, schedule, scheduler) id,
  CODA_TILE_CONFIGS(CODA_TILE_CONFIG_ENUMERATOR)
#undef CODA_TILE_CONFIG_ENUMERATOR
};
constexpr int kNumTileConfigs = 0
#define CODA_TILE_CONFIG_COUNT(...) +1
    CODA_TILE_CONFIGS(CODA_TILE_CONFIG_COUNT)
#undef CODA_TILE_CONFIG_COUNT
    ;

// A config's CTA tile and cluster, in tiles of the output.
struct TileGeometry {
  int tile_m, tile_n, cluster_m, cluster_n;
};
TileGeometry geometry(TileConfig config);
// The tile the epilogue works on, which lays out the programs' partial buffers (merge.hpp): the
// CTA tile, but 64 x 128 under OverlapCooperative (its epilogue warp group takes the 128 x 256
// tile as four such virtual tiles; kernels/coda/gemm/overlap_cooperative.hpp).
struct EpilogueTileGeometry {
  int tile_m, tile_n;
};
EpilogueTileGeometry epilogue_geometry(TileConfig config);

// CUTLASS's persistent scheduler walks output tiles along M or N; swizzle groups that many tiles
// across the other mode for L2 reuse. Wrong settings halve throughput on wide-N shapes.
enum class RasterOrder : std::uint8_t { kHeuristic, kAlongM, kAlongN };

// Stream-K configs only: how K is split across CTAs. Reductions are always deterministic.
enum class Decomposition : std::uint8_t { kHeuristic, kDataParallel, kStreamK };

// Everything that picks the kernel and how it walks the problem.
struct KernelChoice {
  TileConfig config = TileConfig::kCoop128x256Cluster2x1;
  RasterOrder raster = RasterOrder::kHeuristic;
  int swizzle = 1;  // 1, 2, 4 or 8
  Decomposition decomposition = Decomposition::kHeuristic;

  friend bool operator==(const KernelChoice& a, const KernelChoice& b) {
    return a.config == b.config && a.raster == b.raster && a.swizzle == b.swizzle &&
           a.decomposition == b.decomposition;
  }
};

const char* to_string(OperandLayout layout);
const char* to_string(TileConfig config);  // "coop_128x256_2x1"
const char* identifier(TileConfig config); // "kCoop128x256Cluster2x1"
const char* to_string(RasterOrder raster);
const char* to_string(Decomposition decomposition);
bool is_stream_k(TileConfig config);
// Whether a config runs the Pingpong schedule (one tile per consumer warp group).
bool is_pingpong(TileConfig config);

}  // namespace coda::gemm
