// SPDX-License-Identifier: BSD-3-Clause
// The LM head's online log-sum-exp (cross-entropy), with or without the logits. (Device-side,
// CUTLASS.)
#pragma once

#include "coda/programs/common.hpp"

#include "coda/epilogue/online_lse.hpp"

namespace coda::epilogue {

// D = logits = acc;  per-tile log Σ exp and the target logit
struct CrossEntropyPartials {
  using Params = CrossEntropyPartialsParams;
  template <class Ctx>
  using Callbacks = OnlineLse<Acc>;

  template <class Args>
  static void fill(Args& a, const Params& p) {
    a.op_1 = {p.lse_partials, p.lse_padded, p.targets, p.targets_int64, p.ignore_index,
              p.target_logits, p.softcap};
  }
};
CODA_COMPILE_EXAMPLE(CrossEntropyPartials, kAkBk, bf16);

// CrossEntropyPartials compiled with no D (GemmKernel<..., void, ...>):
// only the per-tile log Σ exp and the target logits leave the kernel.
// Under OverlapCooperative its epilogue (an exp per logit) outlasts the mainloop, and the K-block
// of 64 ran 5-8 % faster than 32 (gemm/kernel.hpp, kMainloopKBlock).
struct CrossEntropyLoss : CrossEntropyPartials {
  using Params = CrossEntropyLossParams;
  static constexpr int kOverlapKBlock = 64;
};
CODA_COMPILE_PROGRAM(CrossEntropyLoss, kAkBk, void);

}  // namespace coda::epilogue
