// SPDX-License-Identifier: BSD-3-Clause
// The RMSNorm backward in the consuming linear's dgrad. (Device-side, CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/partial_reduction.hpp"
#include "coda/epilogue/rms_norm_grad.hpp"
#include "coda/programs/rstd_row_scale.hpp"

namespace coda::epilogue {

// The RMSNorm backward in the consuming linear's dgrad (docs/ops-math.md §2.7): dX → D, N → normed,
// ∂w partials. A DAG: G, u and w each feed several nodes.
struct RmsNormBwd {
  using Params = RmsNormBwdParams;
  // Pingpong 128x192 (192 accumulators a thread) in 64 x 16 subtiles: with CUTLASS's column
  // reduction, which refused 16 columns, it spilled at 32 (ptxas: 604 B of stores, 1076 of loads;
  // twenty-second session); CODA's column node (column_partial_sum.hpp) takes 16. Pingpong
  // 128x128 keeps its 32-column subtile (its tuned rows ran it).
  static constexpr int kWidePingpongEpilogueTileN = 16;
  template <class Ctx>
  using Callbacks =
      Dag<Edges<From<>, From<>, From<1, 0>, From<>, From<>, From<3, 4>, From<>, From<5, 6>,
                From<7>, From<2, 5>, From<9>, From<>, From<>, From<11, 12>,
                From<2, 6, 5, 13, 4>>,
          Acc,                             // 0: dZ · W
          Scalar,                          // 1: α
          MapNode<ProductFn>,              // 2: G = α · acc
          TileLoad<Ctx, bf16>,             // 3: X
          RowRstd,                         // 4: r
          MapNode<ProductFn>,              // 5: u = X · r
          PerCol<Ctx, bf16>,               // 6: w
          MapNode<ProductFn>,              // 7: N = u ⊙ w
          TileStoreNode<Ctx, bf16>,        // 8: → normed
          MapNode<ProductFn>,              // 9: G ⊙ u
          PerColPartialSumNode<Ctx>,       // 10: → ∂w partials
          PerRow<Ctx, float>,              // 11: zdz
          Scalar,                          // 12: 1 / D
          MapNode<ProductFn>,              // 13: c
          MapNode<RmsNormInputGrad>>;      // 14: D = dX

  template <class Args>
  static void fill(Args& a, const Params& p) {
    cute::get<1>(a) = scalar_args(p.alpha);
    cute::get<3>(a) = {static_cast<const bf16*>(p.x), bf16(0), row_major_stride(p.x_stride)};
    cute::get<4>(a) = p.rstd;
    cute::get<6>(a) = {static_cast<const bf16*>(p.norm_weight), bf16(0), {}};
    cute::get<8>(a) = {static_cast<bf16*>(p.normed), row_major_stride(p.normed_stride)};
    cute::get<10>(a) = {p.dw_partials};
    cute::get<11>(a) = {p.zdz, 0.0f, {}};
    cute::get<12>(a) = {{1.0f / float(p.rstd.sums.width)}, {nullptr}, {}};
  }
};
CODA_COMPILE_PROGRAM(RmsNormBwd, kAkBn, bf16);
// The same, dX added into D by TMA reduce-add (the incoming residual-stream gradient).
struct RmsNormBwdAccumulate : RmsNormBwd {
  using Params = RmsNormBwdAccumulateParams;
  static constexpr bool kAccumulateIntoD = true;
};
CODA_COMPILE_PROGRAM(RmsNormBwdAccumulate, kAkBn, bf16);

}  // namespace coda::epilogue
