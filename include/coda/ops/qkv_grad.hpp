// SPDX-License-Identifier: BSD-3-Clause
// The gradient of a fused QKV projection's output [M, N], as attention's backward returns it:
// three column blocks dQ | dK | dV, each [M, width] bf16 with contiguous 16-byte aligned rows of
// its own stride — read where they are, with no copy into one [M, N] tensor (rope_bwd,
// qknorm_rope_bwd). Their widths add up to N; where split, each is a multiple of 8 columns (a
// boundary never falls inside a 16-byte load). One [M, N] tensor passes as it is: q holds all N
// columns, k and v stay empty.
#pragma once

#include "coda/tensor.hpp"

namespace coda::ops {

struct QkvGrad {
  TensorView q, k, v;

  QkvGrad(const TensorView& whole) : q(whole) {}  // NOLINT(google-explicit-constructor)
  QkvGrad(const TensorView& dq, const TensorView& dk, const TensorView& dv) : q(dq), k(dk), v(dv) {}

  bool split() const { return k.data != nullptr || v.data != nullptr; }
};

}  // namespace coda::ops
