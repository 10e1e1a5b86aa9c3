// SPDX-License-Identifier: BSD-3-Clause
// Every epilogue program composed from the primitives, each reading like its math: what the ops
// (include/coda/ops/) run, the worked examples of docs/epilogue.md, the programs of
// tests/device/epilogue/ and of `coda-bench epilogue`. One family per header under
// kernels/coda/programs/; a kernel unit includes only its program's (CODA_COMPILE_PROGRAM), this
// umbrella is for code that wants them all. Device-side (CUTLASS).
#pragma once

#include "coda/programs/accumulate.hpp"
#include "coda/programs/bias_gelu.hpp"
#include "coda/programs/cross_entropy.hpp"
#include "coda/programs/examples.hpp"
#include "coda/programs/qk_norm_rope.hpp"
#include "coda/programs/residual_rms.hpp"
#include "coda/programs/rms_norm_bwd.hpp"
#include "coda/programs/rope.hpp"
#include "coda/programs/rstd_row_scale.hpp"
#include "coda/programs/swiglu.hpp"
#include "coda/programs/swiglu_grad.hpp"
