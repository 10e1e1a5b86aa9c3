// SPDX-License-Identifier: BSD-3-Clause
// The plain GEMM's timed variants, shared by `coda-bench gemm` and `coda-bench tune`: CODA under a
// given kernel choice, cuBLAS, and the check of one against the other before anything is timed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "coda/gemm/config.hpp"
#include "rounds.hpp"

namespace coda::bench {

constexpr std::size_t kRotationBytes = 256u << 20;  // > 4x the H100's 50 MB L2

// "coop_128x256_2x1 along_m s8" (and the decomposition of a stream-K config).
std::string choice_name(const gemm::KernelChoice& choice);

// coda's GEMM under `choice` over the operand sets; its workspace is kept alive by `keep_alive`.
Timed coda_variant(const OperandSets& ops, const gemm::KernelChoice& choice, cudaStream_t stream,
                   std::vector<std::shared_ptr<void>>& keep_alive);

Timed cublas_variant(const OperandSets& ops, cublasHandle_t handle);

// cuBLAS into set 0's D, kept; then `coda` into it, poisoned first; max |coda − cuBLAS| / max |cuBLAS|.
double check_against_cublas(const OperandSets& ops, const Timed& coda, cublasHandle_t handle,
                            const GemmShape& s);

// Launches per variant per round for about `budget_ms` of GPU time, within [lo, hi].
int reps_for(double est_ms, double budget_ms, int lo, int hi);

}  // namespace coda::bench
