// SPDX-License-Identifier: BSD-3-Clause
// choose_kernel: the tuned table first, then a rule; never a kernel that is not compiled in.
#include "coda/gemm/choose_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "coda/gemm/instance.hpp"

namespace coda::gemm {
namespace {

// One table per tuned GPU (`coda-bench tune` on it), each ended by a sentinel (m = 0).
constexpr TunedKernel kH200Table[] = {
#include "kernel_table_h200.inc"
    {OperandLayout::kAkBk, 0, 0, 0, {}},
};
constexpr TunedKernel kH100Table[] = {
#include "kernel_table_h100.inc"
    {OperandLayout::kAkBk, 0, 0, 0, {}},
};

// Shapes outside the table. The reasons are the H100 sweep's (2026-11-21, docs/design.md §10):
// - long K against the output (K >= 3·max(M, N)): stream-K fills the tail wave (8B down 1.04);
// - wide N (N >= 4·M or N >= 16384): walk along M with swizzle 8 so the CTAs in flight share B
//   tiles in L2 (LM head 0.88 -> 1.00, 8B gate/up 0.94 -> 1.07 in the tune phase);
// - otherwise Cooperative 128x256 with a 2x1 cluster, the best single config (11/17 shapes).
KernelChoice rule(int m, int n, int k) {
  if (k >= 3 * std::max(m, n))
    return {TileConfig::kStreamKCoop128x256Cluster2x1, RasterOrder::kHeuristic, 1,
            Decomposition::kStreamK};
  if (n >= 16384 || n >= 4 * m)
    return {TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongM, 8, Decomposition::kHeuristic};
  return {TileConfig::kCoop128x256Cluster2x1, RasterOrder::kHeuristic, 1,
          Decomposition::kHeuristic};
}

// SMs of both tuned parts (H100 SXM, H200).
constexpr int kSms = 132;

// Tiles of 128 × 256 in 4 waves: from here on a kernel's tail wave is a small share of its time,
// and the tile, raster and swizzle tuned at one token count keep their ranking at another.
constexpr long kManyWaveTiles = 4 * kSms;

// A choice made for another shape whose tiles fill less of their waves than this is replaced
// (fill_last_wave). On the H100 at M = 9216 (1B widths: 4.4 waves, 87 % filled) stream-K was
// 4–13 % ahead on four shapes; at M = 11951 (5.7 waves, 95 %) on none; at M = 3000 and 5194
// (1.5 and 2.5 waves) the data-parallel choice ran 0.76–0.85 × cuBLAS (bench/RESULTS.md,
// fifteenth and sixteenth sessions).
constexpr double kMinWaveFill = 0.9;

// Where no data-parallel grid fills its waves, stream-K takes the stream-K decomposition from this
// K on: on the H100 it ran 10–26 % ahead of CUTLASS's heuristic decomposition on the 1B long-K
// shapes at M = 1536 and 5194. Where a grid fills its waves, that grid ran 2–34 % ahead of
// stream-K at M = 1024–5194, long K included (bench/RESULTS.md, nineteenth session).
constexpr int kStreamKMinK = 8192;

long tiles_128x256(int m, int n) { return long((m + 127) / 128) * long((n + 255) / 256); }

long round_up(long x, long multiple) { return (x + multiple - 1) / multiple * multiple; }

}  // namespace

ClusterTiles cluster_tiles(TileConfig config, long m, long n) {
  const TileGeometry g = geometry(config);
  return {round_up((m + g.tile_m - 1) / g.tile_m, g.cluster_m),
          round_up((n + g.tile_n - 1) / g.tile_n, g.cluster_n)};
}

long scheduled_tiles(const KernelChoice& choice, int m, int n) {
  // CUTLASS's tile_scheduler_params.h: the tile counts rounded up to the cluster, the swizzle
  // capped by the smaller of them (get_log_swizzle_size), both rounded up to swizzle × cluster.
  const TileGeometry g = geometry(choice.config);
  const auto [blocks_m, blocks_n] = cluster_tiles(choice.config, m, n);
  const long smaller = std::min(blocks_m, blocks_n);
  const long cap = smaller >= 6 ? 8 : smaller >= 3 ? 4 : smaller >= 2 ? 2 : 1;
  const long swizzle = std::min<long>(choice.swizzle, cap);
  return round_up(blocks_m, swizzle * g.cluster_m) * round_up(blocks_n, swizzle * g.cluster_n);
}

// The default bound (SwizzleFit::max_padding, 2 %): a few % of L2 reuse is what the tuned swizzles
// bought (bench/RESULTS.md, fifteenth session).
KernelChoice fit_swizzle(KernelChoice choice, int m, int n, const SwizzleFit& fit) {
  KernelChoice one = choice;
  one.swizzle = 1;
  const double floor = double(scheduled_tiles(one, m, n));
  const int tuned_swizzle = choice.swizzle;
  while (choice.swizzle > 1 && scheduled_tiles(choice, m, n) > (1 + fit.max_padding) * floor)
    choice.swizzle /= 2;
  if (fit.lowered_walks_along_n && choice.swizzle < tuned_swizzle &&
      choice.raster == RasterOrder::kAlongM)
    choice.raster = RasterOrder::kAlongN;
  // The tuned raster was chosen for a walk in bands of `swizzle` tiles. One tile row (or column)
  // at a time, along N the CTAs in flight each need another tile of B; CUTLASS's heuristic walks
  // the shorter mode, so that they share the larger operand's tiles. Measured on the fused ops
  // (H100, M = 12000 and 5194, old and new forced in the same rounds): faster on all 12
  // Cooperative rows it changed (geomean 0.95 of the tuned raster's time), slower on Pingpong
  // ones (1.02 over 13; the 1B LM-head cross-entropy 1.11–1.21): a Pingpong row keeps its raster
  // (bench/RESULTS.md, seventeenth session) unless its op asks otherwise (the SwiGLU backward:
  // ops::detail::swizzle_fit_of, eighteenth session).
  if (tuned_swizzle > 1 && choice.swizzle == 1 &&
      (!is_pingpong(choice.config) || fit.pingpong_heuristic_raster))
    choice.raster = RasterOrder::kHeuristic;
  return choice;
}

namespace {
// The share of its waves on kSms SMs that `work` (in units one SM runs per wave slot) fills.
double waves_filled(double work) { return work / (std::ceil(work / kSms) * kSms); }
}  // namespace

double wave_fill(const KernelChoice& choice, int m, int n) {
  const TileGeometry g = geometry(choice.config);
  return waves_filled(double(scheduled_tiles(choice, m, n)) * g.tile_m * g.tile_n /
                      (128.0 * 256.0));
}

namespace {
KernelChoice stream_k_for(int k) {
  return {TileConfig::kStreamKCoop128x256Cluster2x1, RasterOrder::kHeuristic, 1,
          k >= kStreamKMinK ? Decomposition::kStreamK : Decomposition::kHeuristic};
}
}  // namespace

double sm_fill(const KernelChoice& choice, int m, int n) {
  KernelChoice one = choice;
  one.swizzle = 1;
  return waves_filled(double(scheduled_tiles(one, m, n)));
}

KernelChoice fill_last_wave(KernelChoice choice, int m, int n, int k) {
  if (is_stream_k(choice.config) || wave_fill(choice, m, n) >= kMinWaveFill) return choice;
  // Another data-parallel tile grid that fills its waves: a 128 × 256 one (either cluster), else
  // Pingpong 128 × 128 where its tiles keep the SMs busy, one tile each.
  for (TileConfig c : {TileConfig::kCoop128x256Cluster2x1, TileConfig::kCoop128x256Cluster1x2}) {
    const KernelChoice coop{c, RasterOrder::kHeuristic, 1, Decomposition::kHeuristic};
    if (wave_fill(coop, m, n) >= kMinWaveFill) return coop;
  }
  const KernelChoice pingpong =
      choice.config == TileConfig::kPingpong128x128Cluster2x1
          ? choice
          : KernelChoice{TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kHeuristic, 1,
                         Decomposition::kHeuristic};
  if (sm_fill(pingpong, m, n) >= kMinWaveFill) return pingpong;
  return stream_k_for(k);  // the last wave split along K over every SM
}

std::string choice_literal(const KernelChoice& c) {
  const char* raster[] = {"kHeuristic", "kAlongM", "kAlongN"};
  const char* decomposition[] = {"kHeuristic", "kDataParallel", "kStreamK"};
  return std::string("{TileConfig::") + identifier(c.config) + ", RasterOrder::" +
         raster[int(c.raster)] + ", " + std::to_string(c.swizzle) + ", Decomposition::" +
         decomposition[int(c.decomposition)] + "}";
}

const TunedKernel* tuned_table(TunedGpu gpu) {
  switch (gpu) {
    case TunedGpu::kH100:
      return kH100Table;
    case TunedGpu::kH200:
      return kH200Table;
    case TunedGpu::kUntuned:
      return nullptr;
  }
  return nullptr;
}

double tuned_shape_distance(int m, int n, int k, int tuned_m, int tuned_n, int tuned_k) {
  const int same = (m == tuned_m) + (n == tuned_n) + (k == tuned_k);
  if (same == 3) return 0.0;
  if (same < 2) return std::numeric_limits<double>::infinity();
  const double ratio = m != tuned_m   ? double(m) / tuned_m
                       : n != tuned_n ? double(n) / tuned_n
                                      : double(k) / tuned_k;
  const double distance = std::fabs(std::log2(ratio));
  if (distance <= 1.0) return distance;
  // Further in M (the token count of a forward or dgrad GEMM and of every fused op): only where
  // both shapes run many waves.
  const bool many_waves = m != tuned_m && tiles_128x256(m, n) >= kManyWaveTiles &&
                          tiles_128x256(tuned_m, n) >= kManyWaveTiles;
  return many_waves ? distance : std::numeric_limits<double>::infinity();
}

bool has_instance(OperandLayout layout, DType d_dtype, TileConfig config) {
  return find_instance(layout, d_dtype, config) != nullptr;
}

namespace {

// The table's (or the rule's) choice for (layout, D dtype, M, N, K) before fill_last_wave, and
// whether it is a row of this very shape run as tuned.
struct TableChoice {
  KernelChoice choice;
  bool as_tuned;
};

TableChoice table_choice(TunedGpu gpu, OperandLayout layout, DType d_dtype, int m, int n, int k) {
  KernelChoice choice = rule(m, n, k);
  double best = std::numeric_limits<double>::infinity();
  if (const TunedKernel* e = tuned_table(gpu))
    for (; e->m != 0; ++e) {
      const double d = e->layout == layout ? tuned_shape_distance(m, n, k, e->m, e->n, e->k) : best;
      if (d < best) best = d, choice = e->choice;  // the first of equals: table order decides
    }
  const KernelChoice timed = choice;
  // The table is tuned for bf16 D; fp32 D compiles fewer configs (scripts/instances.py): keep
  // the scheduler settings and fall back to the same schedule family.
  if (!has_instance(layout, d_dtype, choice.config))
    choice.config = is_stream_k(choice.config) ? TileConfig::kStreamKCoop128x256Cluster2x1
                                               : TileConfig::kCoop128x256Cluster2x1;
  // A row of this very shape, run as tuned, keeps its swizzle; any other choice (another shape's
  // row, the rule, a fallback config with another tile grid) gets one that fits its grid.
  const bool as_tuned = best == 0.0 && choice == timed;
  return {as_tuned ? choice : fit_swizzle(choice, m, n), as_tuned};
}

}  // namespace

KernelChoice choose_kernel(OperandLayout layout, DType d_dtype, int m, int n, int k) {
  return choose_kernel_for(current_tuned_gpu(), layout, d_dtype, m, n, k);
}

KernelChoice choose_kernel_for(TunedGpu gpu, OperandLayout layout, DType d_dtype, int m, int n,
                               int k) {
  const TableChoice t = table_choice(gpu, layout, d_dtype, m, n, k);
  if (t.as_tuned) return t.choice;
  const KernelChoice filled = fill_last_wave(t.choice, m, n, k);
  // fp32 D compiles fewer configs (scripts/instances.py): a grid it lacks runs stream-K instead.
  return has_instance(layout, d_dtype, filled.config) ? filled : stream_k_for(k);
}

KernelChoice choose_data_parallel_kernel(OperandLayout layout, DType d_dtype, int m, int n, int k) {
  return choose_data_parallel_kernel_for(current_tuned_gpu(), layout, d_dtype, m, n, k);
}

KernelChoice choose_data_parallel_kernel_for(TunedGpu gpu, OperandLayout layout, DType d_dtype,
                                             int m, int n, int k) {
  KernelChoice c = table_choice(gpu, layout, d_dtype, m, n, k).choice;
  if (is_stream_k(c.config)) c.config = TileConfig::kCoop128x256Cluster2x1;
  c.decomposition = Decomposition::kHeuristic;
  return c;
}

}  // namespace coda::gemm
