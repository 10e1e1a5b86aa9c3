// SPDX-License-Identifier: BSD-3-Clause
// The fused ops that choose a kernel, declared once: each is a key of the per-GPU op tables
// (src/ops/op_table_<gpu>.inc, rows `{OpKey::kLinearSwiglu, M, N, K, choice}`), of the
// autotuner's cache (by name) and of `coda-bench ops|tune-ops --ops` (by name). A QK-norm op that
// also stores its pre-norm QKV runs another program, hence its own key. Host-visible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "coda/gemm/config.hpp"

// X(identifier, name, program): the enumerator, the op's public name and the params of its program,
// whose compiled configs are the op's (epilogue::has_program_instance; an op's other programs,
// e.g. without D, are compiled for the same ones).
#define CODA_OP_KEYS(X)                                                                        \
  X(kLinearResidualRms, "linear_residual_rms", ResidualRmsParams)                              \
  X(kLinearRmsnorm, "linear_rmsnorm", RstdRowScaleParams)                                      \
  X(kLinearSwiglu, "linear_swiglu", SwiGluPairsParams)                                         \
  X(kLinearRmsnormSwiglu, "linear_rmsnorm_swiglu", RstdSwiGluPairsParams)                      \
  X(kLinearRope, "linear_rope", RopeRotateParams)                                              \
  X(kLinearRmsnormRope, "linear_rmsnorm_rope", RstdRopeRotateParams)                           \
  X(kLinearQknormRope, "linear_qknorm_rope", QkNormRopeParams)                                 \
  X(kLinearQknormRopeSavePre, "linear_qknorm_rope_save_pre", QkNormRopeSavePreParams)          \
  X(kLinearRmsnormQknormRope, "linear_rmsnorm_qknorm_rope", RstdQkNormRopeParams)              \
  X(kLinearRmsnormQknormRopeSavePre, "linear_rmsnorm_qknorm_rope_save_pre",                    \
    RstdQkNormRopeSavePreParams)                                                               \
  X(kLinearCrossEntropy, "linear_cross_entropy", CrossEntropyLossParams)                       \
  X(kLinearSwigluBwd, "linear_swiglu_bwd", SwiGluBwdParams)                                    \
  X(kLinearRmsnormBwd, "linear_rmsnorm_bwd", RmsNormBwdParams)                                 \
  X(kLinearBiasGelu, "linear_bias_gelu", BiasGeluParams)                                       \
  X(kLinearBiasGeluSavePre, "linear_bias_gelu_save_pre", BiasGeluSavePreParams)                \
  X(kLinearBiasGeluBwd, "linear_bias_gelu_bwd", BiasGeluBwdParams)

namespace coda::ops {

enum class OpKey : std::uint8_t {
#define CODA_OP_KEY_ENUMERATOR(id, name, program) id,
  CODA_OP_KEYS(CODA_OP_KEY_ENUMERATOR)
#undef CODA_OP_KEY_ENUMERATOR
  kCount  // not an op: the number of keys (and the op tables' end marker)
};

// "linear_swiglu"; the enumerator's spelling, "kLinearSwiglu" (what `coda-bench tune-ops` writes).
const char* name(OpKey key);
const char* identifier(OpKey key);
std::optional<OpKey> op_key_from_name(std::string_view name);

// One row of an op table, as `coda-bench tune-ops` and `python -m coda.bench tune` write it and
// scripts/merge_table.py reads it: `{OpKey::kLinearSwiglu, M, N, K, {TileConfig::…,
// RasterOrder::…, swizzle, Decomposition::kHeuristic}},` (no comment, no newline).
std::string op_table_row(OpKey key, std::int64_t m, std::int64_t n, std::int64_t k,
                         const gemm::KernelChoice& choice);

}  // namespace coda::ops
