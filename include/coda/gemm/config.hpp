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

// Tile (M×N, K-block 64), cluster and schedule. Named after what they are; the CUTLASS types behind
// each name live in gemm/kernel.hpp. Menu from the H100 sweep of 2026-11-21 (docs/design.md §10):
// with raster/swizzle per shape, these five were the finalists on 16 of the 17 Llama-3 shapes.
enum class TileConfig : std::uint8_t {
  kCoop128x256Cluster1x2,
  kCoop128x256Cluster2x1,
  kCoop256x128Cluster1x2,
  kStreamKCoop128x256Cluster2x1,
  kPingpong128x128Cluster2x1,
};
constexpr int kNumTileConfigs = 5;

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
const char* to_string(TileConfig config);
const char* to_string(RasterOrder raster);
const char* to_string(Decomposition decomposition);
bool is_stream_k(TileConfig config);

}  // namespace coda::gemm
