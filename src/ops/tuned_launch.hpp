// SPDX-License-Identifier: BSD-3-Clause
// How a fused op runs its kernels: with the choice program_choice made, or, with the autotuner on
// (coda/ops/autotune.hpp), with the winner timed on this machine. Internal.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>

#include "coda/gemm/config.hpp"
#include "coda/ops/op_key.hpp"
#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"

namespace coda::ops::detail {

// What the tuner needs to know about an op's call besides its launches.
struct TunedCall {
  OpKey op;  // program_choice's key
  std::int64_t m, n, k;
  // Candidates keep the rule's config: an op whose output layout depends on it
  // (linear_residual_rms's statistics, predicted by linear_residual_rms_stats_layout).
  bool keep_config = false;
  // The output the op also reads (dX under accumulate; none when its data is null): saved before
  // the timed runs, restored after.
  TensorView read_output = {};
};

// Everything the op launches for one kernel choice: every launch after the checks, so that a
// timed candidate costs what the op costs. Must be safe to repeat on the same arguments.
using OpLaunch = std::function<void(const gemm::KernelChoice&)>;

// Runs `launch` once for the call's result and returns the choice it ran: `rule` (program_choice's
// answer) unless the autotuner is on and options.choice is unset; then the known winner for
// (device, op, n, k, bucket(m)), timed first when none is known and the stream is not capturing.
// Call after every check (require_memory): timing writes the op's outputs.
gemm::KernelChoice launch_tuned(const TunedCall& call, const OpOptions& options,
                                const gemm::KernelChoice& rule, cudaStream_t stream,
                                const OpLaunch& launch);

}  // namespace coda::ops::detail
