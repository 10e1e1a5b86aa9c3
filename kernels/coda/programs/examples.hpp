// SPDX-License-Identifier: BSD-3-Clause
// The example programs of docs/epilogue.md and tests/device/epilogue (no op runs them). (Device-
// side, CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/partial_reduction.hpp"

namespace coda::epilogue {

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
CODA_COMPILE_EXAMPLE(RowScale, kAkBk, bf16);

// Y = silu(acc + b[n]) → D;  Σ_m Y → per-col partials
struct BiasSiluColSum {
  using Params = BiasSiluColSumParams;
  template <class Ctx>
  using Callbacks = PerColPartialSum<Ctx, Silu<Add<Acc, PerCol<Ctx, bf16>>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0.op_1 = {static_cast<const bf16*>(p.bias), bf16(0), {}};  // b[n]
    a.op_1 = {p.col_partials};
  }
};
CODA_COMPILE_EXAMPLE(BiasSiluColSum, kAkBk, bf16);

// D = silu(acc)
struct Activation {
  using Params = ActivationParams;
  template <class Ctx>
  using Callbacks = Silu<Acc>;

  template <class Args>
  static void fill(Args&, const Params&) {}
};
CODA_COMPILE_EXAMPLE(Activation, kAkBk, bf16);

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
CODA_COMPILE_EXAMPLE(ResidualAdd, kAkBk, bf16);

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
CODA_COMPILE_EXAMPLE(RowSumSquares, kAkBk, bf16);

}  // namespace coda::epilogue
