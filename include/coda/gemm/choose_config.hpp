// SPDX-License-Identifier: BSD-3-Clause
// Shape -> kernel choice: committed tables tuned per GPU (tuned_gpu.hpp) for the Llama-3 training
// shapes, and a rule for every other shape or GPU. Deterministic: on one device, the same shape
// always gets the same kernel.
#pragma once

#include <string>

#include "coda/gemm/config.hpp"
#include "coda/gemm/tuned_gpu.hpp"
#include "coda/tensor.hpp"

namespace coda::gemm {

// The kernel for (layout, D dtype, M, N, K) on the current device. Always names an instantiated
// kernel.
KernelChoice choose_kernel(OperandLayout layout, DType d_dtype, int m, int n, int k);
// The same for a given GPU's table (tests, tools).
KernelChoice choose_kernel_for(TunedGpu gpu, OperandLayout layout, DType d_dtype, int m, int n,
                               int k);

// The same choice before its last wave is filled with stream-K, and with a stream-K table row
// run data parallel on the same tile (kCoop128x256Cluster2x1), keeping its raster and swizzle:
// for the GEMMs whose epilogue cannot run on a K-split tile (the fused dgrad programs, the
// cross-entropy chunk GEMMs that share one workspace).
KernelChoice choose_data_parallel_kernel(OperandLayout layout, DType d_dtype, int m, int n, int k);
KernelChoice choose_data_parallel_kernel_for(TunedGpu gpu, OperandLayout layout, DType d_dtype,
                                             int m, int n, int k);

// One row of a GPU's tuned table (src/gemm/kernel_table_<gpu>.inc, written by `coda-bench tune`).
struct TunedKernel {
  OperandLayout layout;
  int m, n, k;
  KernelChoice choice;
};
// `gpu`'s table in file order, ended by a row with m = 0; null for kUntuned (tests, tools).
const TunedKernel* tuned_table(TunedGpu gpu);

// How far a tuned shape is from (m, n, k), for the table lookups: 0 when equal; when two dims are
// equal and the third (in practice the token count: M forward and dgrad, K wgrad) is within a
// factor of 2, |log2| of its ratio; the same beyond 2× in M where both shapes fill at least 4
// waves of 128 × 256 tiles on 132 SMs; otherwise infinity. A table entry serves its nearest
// shapes: a batch or sequence length near a tuned one wants the same tile, raster and swizzle
// (measured at M = 5194 against entries tuned at 16384: bench/RESULTS.md), while another model
// width may not (so widths must match).
double tuned_shape_distance(int m, int n, int k, int tuned_m, int tuned_n, int tuned_k);

// The output tiles of `config` at M × N, each mode rounded up to the cluster (swizzle 1).
struct ClusterTiles {
  long rows, cols;
};
ClusterTiles cluster_tiles(TileConfig config, long m, long n);

// Output tiles CUTLASS's persistent scheduler walks for `choice` at M × N: it rounds the tile grid
// up to a multiple of swizzle × cluster in both modes (tile_scheduler_params.h), and the padding
// tiles run their mainloop on zero-filled operands.
long scheduled_tiles(const KernelChoice& choice, int m, int n);

// How fit_swizzle treats a choice made for another shape. The defaults are the plain GEMM's and
// most fused ops'; an op whose measurements say otherwise passes its own (ops::detail).
struct SwizzleFit {
  // The padding tiles a swizzle may add over swizzle 1's, as a share of swizzle 1's tiles.
  double max_padding = 0.02;
  // Whether a Pingpong choice whose swizzle falls to 1 also takes the heuristic raster (a
  // Cooperative one always does).
  bool pingpong_heuristic_raster = false;
  // Whether a choice that walks along M and whose swizzle the fit lowers walks along N instead.
  // Along M, every band of `swizzle` tile columns streams all of A again: a band a quarter as
  // wide streams A four times as often (the fused ops: ops::detail::swizzle_fit_of).
  bool lowered_walks_along_n = false;
};

// `choice`, made for another shape (a table row at the nearest token count, or a rule), with its
// swizzle halved until its padding tiles are at most `fit.max_padding` (2 %) over swizzle 1's at
// M × N. A swizzle of 8 tuned at M = 16384 pads 36 tile rows of 256 to 40 at M = 9216: 11 % more
// mainloop for nothing (the 70B LM head ran 1.35 × PyTorch's matmul there, bench/RESULTS.md
// fifteenth session).
// A Cooperative choice whose swizzle is fitted down to 1 also walks along the shorter mode
// (RasterOrder::kHeuristic): the tuned raster was chosen for a swizzled walk. A Pingpong choice
// keeps its raster unless `fit` says otherwise (measured: bench/RESULTS.md, seventeenth and
// eighteenth sessions).
KernelChoice fit_swizzle(KernelChoice choice, int m, int n, const SwizzleFit& fit = {});

// The share of the SM waves that `choice`'s tiles at M × N fill (132 SMs; a 128 × 128 tile counts
// as half a 128 × 256 one): 1 when the last wave is full, 0.5 for one and a half waves.
double wave_fill(const KernelChoice& choice, int m, int n);

// The share of 132 SMs that `choice`'s tiles at M × N keep busy over their waves, one tile per SM
// (swizzle 1): what a Pingpong 128 × 128 kernel with fewer than two tiles an SM fills, each SM
// running one tile where `wave_fill` counts half a 128 × 256 one.
double sm_fill(const KernelChoice& choice, int m, int n);

// `choice`, made for another shape, unless its tiles fill less than 90 % of their waves
// (wave_fill); then the first grid that fills 90 %: Cooperative 128 × 256 (2 × 1, then 1 × 2
// cluster), Pingpong 128 × 128 (sm_fill: one tile per SM); else Cooperative stream-K (whole
// waves data parallel, the last one's tiles split along K over every SM), with the stream-K
// decomposition from K = 8192 and CUTLASS's heuristic one below.
KernelChoice fill_last_wave(KernelChoice choice, int m, int n, int k);

// `{TileConfig::kX, RasterOrder::kY, swizzle, Decomposition::kZ}`: a choice as the tuned tables
// (src/gemm/kernel_table_<gpu>.inc, src/ops/op_table_<gpu>.inc) spell it.
std::string choice_literal(const KernelChoice& choice);

// Whether a kernel for (layout, D dtype, config) is compiled into the library.
bool has_instance(OperandLayout layout, DType d_dtype, TileConfig config);

}  // namespace coda::gemm
