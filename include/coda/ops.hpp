// SPDX-License-Identifier: BSD-3-Clause
// Every public CODA op, for C++ users: the fused forward and backward ops of a Llama-style block
// and of a GPT-2 / BERT MLP (linear_bias_gelu), the weight layouts they read, their options, the
// op keys and the autotuner. Host-visible: no CUTLASS or device code.
#pragma once

#include "coda/ops/autotune.hpp"
#include "coda/ops/linear_bias_gelu.hpp"
#include "coda/ops/linear_cross_entropy.hpp"
#include "coda/ops/linear_norm.hpp"
#include "coda/ops/linear_rmsnorm_bwd.hpp"
#include "coda/ops/linear_rope.hpp"
#include "coda/ops/linear_swiglu.hpp"
#include "coda/ops/linear_swiglu_bwd.hpp"
#include "coda/ops/norm_stats.hpp"
#include "coda/ops/op_key.hpp"
#include "coda/ops/options.hpp"
#include "coda/ops/qknorm_rope_bwd.hpp"
#include "coda/ops/qkv_grad.hpp"
#include "coda/ops/rope_bwd.hpp"
#include "coda/ops/weights.hpp"
