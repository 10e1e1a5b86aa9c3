// SPDX-License-Identifier: BSD-3-Clause
// QK-norm then RoPE per head, with or without the deferred norm, saving the pre- norm input or not.
// (Device-side, CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/qk_norm_rope.hpp"
#include "coda/epilogue/register_store.hpp"
#include "coda/epilogue/rope.hpp"
#include "coda/programs/rstd_row_scale.hpp"

namespace coda::epilogue {

inline QkNormRopeArguments qk_norm_rope_args(const QkNormRopeParams& p) {
  return {{p.rope.positions, p.rope.frequencies},
          static_cast<const bf16*>(p.q_norm_weight),
          static_cast<const bf16*>(p.k_norm_weight),
          p.q_columns,
          p.qk_columns,
          p.head_dim,
          p.eps};
}

// D = RoPE(RMSNorm_head(acc) ⊙ γ) on the Q and K heads, V = acc (QK-norm, Qwen3 / OLMo-2)
struct QkNormRope {
  using Params = QkNormRopeParams;
  static constexpr int kEpilogueTileN = kQkNormSubtileN;  // whole heads per subtile
  template <class Ctx>
  using Callbacks = QkNormRopePairs<Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = qk_norm_rope_args(p);
  }
};
CODA_COMPILE_PROGRAM(QkNormRope, kAkBk, bf16);

// The same on rstd[m] · acc (the deferred input RMSNorm)
struct RstdQkNormRope {
  using Params = RstdQkNormRopeParams;
  // rstd[m] · acc is rounded once by the framework: no bf16 handoff (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  static constexpr int kEpilogueTileN = kQkNormSubtileN;
  template <class Ctx>
  using Callbacks = QkNormRopePairs<Mul<RowRstd, Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0 = p.rstd;
    a.op_1 = qk_norm_rope_args(p.qk);
  }
};
CODA_COMPILE_PROGRAM(RstdQkNormRope, kAkBk, bf16);

// QkNormRope and RstdQkNormRope that also store their input (acc, rstd[m] · acc) → pre, from
// registers (register_store.hpp says why)
struct QkNormRopeSavePre {
  using Params = QkNormRopeSavePreParams;
  static constexpr int kEpilogueTileN = kQkNormSubtileN;
  template <class Ctx>
  using Callbacks = QkNormRopePairs<RegisterTileStore<Acc>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_1 = {static_cast<bf16*>(p.pre), p.pre_stride};
    a.op_1 = qk_norm_rope_args(p.qk);
  }
};
CODA_COMPILE_PROGRAM(QkNormRopeSavePre, kAkBk, bf16);
struct RstdQkNormRopeSavePre {
  using Params = RstdQkNormRopeSavePreParams;
  // rstd[m] · acc is rounded once by the framework: no bf16 handoff (gemm/kernel.hpp).
  static constexpr bool kNeedsFp32Accumulator = true;
  static constexpr int kEpilogueTileN = kQkNormSubtileN;
  template <class Ctx>
  using Callbacks = QkNormRopePairs<RegisterTileStore<Mul<RowRstd, Acc>>>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_0.op_0.op_0 = p.rstd;
    a.op_0.op_1 = {static_cast<bf16*>(p.qk.pre), p.qk.pre_stride};
    a.op_1 = qk_norm_rope_args(p.qk.qk);
  }
};
CODA_COMPILE_PROGRAM(RstdQkNormRopeSavePre, kAkBk, bf16);

}  // namespace coda::epilogue
