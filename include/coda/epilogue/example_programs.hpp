// SPDX-License-Identifier: BSD-3-Clause
// Three epilogue programs composed from the primitives, each reading like its math. They are the
// worked examples of docs/epilogue.md, the programs of tests/device/epilogue/ and of
// `coda-bench epilogue`. Device-side (CUTLASS).
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cutlass/bfloat16.h>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

#include "coda/epilogue/broadcast.hpp"
#include "coda/epilogue/elementwise.hpp"
#include "coda/epilogue/example_params.hpp"
#include "coda/epilogue/partial_reduction.hpp"
#include "coda/epilogue/tile.hpp"

namespace coda::epilogue {

using bf16 = cutlass::bfloat16_t;
// In a split program, the value computed once by the input tree.
using Shared = cutlass::epilogue::fusion::Sm90SplitTreeFetch;
// Compute one value X once, then feed it to an output tree (→ D) and side trees (→ aux outputs).
template <class Input, class Output, class... Side>
using Split = cutlass::epilogue::fusion::Sm90SplitTreeVisitor<Input, Output, Side...>;

// X = acc + R → D;  Σ X² → per-row partials;  X ⊙ w → H
struct ResidualRms {
  using Params = ResidualRmsParams;
  template <class Ctx>
  using Callbacks = Split<
      Add<Acc, TileLoad<Ctx, bf16>>,                        // X = acc + R
      PerRowPartialSumSquares<Ctx, Shared>,                 // D = X, partial Σ X²
      TileStore<Ctx, bf16, Mul<Shared, PerCol<Ctx, bf16>>>  // H = X ⊙ w
      >;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    // input tree: Add(Acc, TileLoad)
    a.op_0.op_1 = {static_cast<const bf16*>(p.residual), bf16(0), row_major_stride(p.residual_stride)};
    // side tree: TileStore(Mul(Shared, PerCol))
    a.op_1.op_0.op_1 = {static_cast<const bf16*>(p.norm_weight), bf16(0), {}};
    a.op_1.op_1 = {static_cast<bf16*>(p.normed), row_major_stride(p.normed_stride)};
    // output tree: PerRowPartialSumSquares(Shared)
    a.op_2.op_1 = {p.sumsq_partials, 0.0f, {}};
  }
};

// D = α · r[m] · acc
struct RowScale {
  using Params = RowScaleParams;
  template <class Ctx>
  using Callbacks = Mul<Scalar, Mul<PerRow<Ctx, float>, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0 = scalar_args(p.alpha);                   // α
    a.op_1.op_0 = {p.row_scale, 0.0f, {}};           // r[m]
  }
};

// Y = silu(acc + b[n]) → D;  Σ_m Y → per-col partials
struct BiasSiluColSum {
  using Params = BiasSiluColSumParams;
  template <class Ctx>
  using Callbacks = PerColPartialSum<Ctx, Silu<Add<Acc, PerCol<Ctx, bf16>>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0.op_1 = {static_cast<const bf16*>(p.bias), bf16(0), {}};  // b[n]
    a.op_1 = {p.col_partials, 0.0f, {}};
  }
};

// D = silu(acc)
struct Activation {
  using Params = ActivationParams;
  template <class Ctx>
  using Callbacks = Silu<Acc>;

  template <class Args>
  static void fill(Args&, const Params&) {}
};

// D = acc + R
struct ResidualAdd {
  using Params = ResidualAddParams;
  template <class Ctx>
  using Callbacks = Add<Acc, TileLoad<Ctx, bf16>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {static_cast<const bf16*>(p.residual), bf16(0), row_major_stride(p.residual_stride)};
  }
};

// D = acc;  Σ acc² → per-row partials
struct RowSumSquares {
  using Params = RowSumSquaresParams;
  template <class Ctx>
  using Callbacks = PerRowPartialSumSquares<Ctx, Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {p.sumsq_partials, 0.0f, {}};
  }
};

}  // namespace coda::epilogue
