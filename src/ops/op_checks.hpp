// SPDX-License-Identifier: BSD-3-Clause
// Argument checks shared by the op launchers (src/ops/), on top of coda::ArgCheck, and the kernel
// choice for an op's GEMM. Internal.
#pragma once

#include <cstddef>
#include <cstdint>

#include "coda/epilogue/program_launchers.hpp"
#include "coda/gemm/choose_config.hpp"
#include "coda/gemm/config.hpp"
#include "coda/ops/linear_rope.hpp"
#include "coda/ops/norm_stats.hpp"
#include "coda/ops/op_key.hpp"
#include "coda/ops/options.hpp"
#include "coda/tensor.hpp"
#include "tuned_launch.hpp"

namespace coda::ops::detail {

// A rows × cols bf16 matrix with contiguous rows that TMA can read or write.
void require_bf16_matrix(const ArgCheck& check, const TensorView& t, const char* name,
                         std::int64_t rows, std::int64_t cols, int device);
// The same for any dtype (fp32 weight gradients).
void require_matrix(const ArgCheck& check, const TensorView& t, const char* name, std::int64_t rows,
                    std::int64_t cols, DType dtype, int device);
// A contiguous vector of `length` elements of `dtype`, 16-byte aligned.
void require_vector(const ArgCheck& check, const TensorView& t, const char* name,
                    std::int64_t length, DType dtype, int device);
// A forward linear's operands: the input A [M, K] and the weight W [N, K] (nn.Linear layout), both
// bf16 with contiguous rows. Returns the GEMM's M × N × K.
struct LinearShape {
  std::int64_t m, n, k;
};
LinearShape require_linear(const ArgCheck& check, const TensorView& A, const char* a_name,
                           const TensorView& W, const char* w_name);
// A dgrad GEMM's operands: the gradient dY [M, D] of a linear's output and that linear's weight
// W [D, N] (nn.Linear layout), both bf16 with contiguous rows. Returns the GEMM's M × N × K
// (K = D); the GEMM reads W as the N-major B (TensorView::matrix_col_major).
LinearShape require_dgrad_linear(const ArgCheck& check, const TensorView& dY, const char* dy_name,
                                 const TensorView& W, const char* w_name);
// That dgrad GEMM's B: the weight W [D, N] read as an N × D N-major matrix.
TensorView dgrad_b(const TensorView& W);
// How program_choice fits a choice made for another shape to this one (gemm::fit_swizzle):
// the defaults, or the op's own where it was measured to differ.
gemm::SwizzleFit swizzle_fit_of(OpKey op);
// On the H100, from K = 4096 and M = 4096, the fallback's Pingpong 128×128 along N becomes
// Pingpong 128×192 along N with swizzle 2 (where the op's program is compiled for it: not the
// QK-norm ones), and so does the SwiGLU backward's kernel at every K from 4096. Over the H100 op
// tuner's 34 rows at K = 4096 (8B widths) and the SwiGLU backward's at K = 8192 (70B), every
// candidate timed at M = 4096–32768 (bench/RESULTS.md, twenty-eighth session), it is within 0.92
// of the best candidate on every forward row (worst 0.947) and within 0.90 (M = 4686) to 1.00 on
// the SwiGLU backward's, where Pingpong 128×128 along N read as low as 0.81 and 0.78. Why (a
// reading, not measured): the wider tile reads fewer operand bytes per FLOP, and Pingpong still
// hides the epilogue. Below K = 4096 (the 1B widths) Pingpong 128×128 stays the best from
// M = kFewTokens, but for an MLP's wide output (is_wide_output, not the LM head): there the wide
// tile along N, swizzle 2, widens at every K below 8192, also where the rule walks along M (41st
// session, priced on the H100's tuner logs, 801 rows at M = 1024–65536: the rule alone within 0.92
// of the best on 682, was 644, geomean 0.957 → 0.962; the 36 rows it changes, the 1B SwiGLU,
// RMSNorm-SwiGLU and bias-GELU at M = 4096–65536, from 1.00–1.22 × the best to 1.00–1.16, none
// slower by more than 0.5 %; the 1B cross-entropy lost 5–31 % with it, so it keeps 128×128).
// In sample: the logs it was read from; A/B it at a width no table row has (Qwen2.5-7B).
// Below kFewTokens a forward op's Pingpong 128×128 (the rule's choice at every K below 8192,
// either raster) becomes 128×192 along the shorter mode of its grid, swizzle 2 where that pads no
// tile, else 1. Over the op tuner's 66 forward rows at M = 1448 and 2896 (1B, 8B, Qwen3-8B; H100,
// thirty-first session) the rule read 0.82 and 0.89 of the best candidate (geomean; 13 of 66
// within 0.92), this 0.97 and 0.99 (61 of 66); A/B'd at M = 1300 and 1800 (old and new builds in
// one run) the rows it changed ran 0.91 and 0.90 × their old time. Its known loss: at M = 1024,
// where 128×128 tiles fill their waves as well, 0.95 of the best against the old 0.975 (priced).
// Why (a reading): with 1–3 waves of tiles, the wider tile's fewer, fuller waves.
// An MLP's wide dgrad (is_wide_dgrad: the SwiGLU and bias-GELU backward) on the H100: from K = 4096,
// 128×192 along N with swizzle 2 from kFewTokens and along the shorter mode below it (as a forward
// op's); below K = 4096, Pingpong 128×128 along N with swizzle 2 from kFewTokens, else `rule` (the
// dgrad GEMM's kernel in Pingpong). Over the H100 op tuner's rows of both ops (sessions 31, 37, 40,
// 41; M = 1024–65536, 1B, 8B and Qwen3-8B widths) the rule alone is within 0.92 of the best
// candidate on 44 of 48 SwiGLU-backward rows (was 32 of 47) and 46 of 50 bias-GELU-backward rows
// (20 of 45: it ran Cooperative where the dgrad GEMM did); its known loss is M = 1024 at K = 4096,
// 0.88–0.94 of the best where 128×128 along M ran the best (42nd session). Out of sample, A/B'd at
// Qwen2.5-7B's widths (K = 3584, M = 5958 and 10000): the SwiGLU backward 0.848 and 0.716 × the old
// time (the dgrad GEMM's along-M raster starved its operand reads), the bias-GELU backward 0.917
// and 0.841.
// On the H200 (its own refinement: along_m_where_measured) and on a GPU without tables `rule` is
// returned unchanged.
constexpr std::int64_t kFewTokens = 4096;
gemm::KernelChoice wide_pingpong_where_measured(gemm::TunedGpu gpu, OpKey op, std::int64_t m,
                                                std::int64_t n, std::int64_t k,
                                                const gemm::KernelChoice& rule);
// A forward fused op's kernel where no tuned shape is near (docs/design.md §10.1). The epilogue's
// share of a tile's time falls as K grows: below K = 8192, Pingpong 128×128, whose two warpgroups
// hide one's epilogue under the other's mainloop, along N with no swizzle (along M, or with a larger
// swizzle, it starves for operands on the H100); from K = 8192 the mainloop dominates and the
// Cooperative 128×256 tile, half the operand bytes per FLOP, along N with swizzle 4. Against every
// candidate timed on 36 H100 and 15 H200 shapes (bench/RESULTS.md, ninth session) the build's own
// untuned choice is within 0.92 of the best on 32 and 15 of them (scripts/rule_coverage.py); the
// plain GEMM's choice made Cooperative, the rule before it, on 22 and 10 (as low as 0.63 of the
// best). Where the tile grid has fewer rows than columns
// and A (M × K) stays in L2, it walks along M instead, the shorter mode, Pingpong with swizzle 2:
// on the H100 at M = 1024–2048, 0.949 of the along-N time over 30 Pingpong rows of two tuner
// runs, 14 faster and 5 slower, in kernels of 20–60 µs that read noisily (bench/RESULTS.md,
// eighteenth session).
gemm::KernelChoice forward_program_rule(std::int64_t m, std::int64_t n, std::int64_t k);
// The ops whose output is an MLP's or the LM head's width, N >= 2K: SwiGLU, RMSNorm + SwiGLU,
// bias-GELU with or without Pre, the loss-only cross-entropy (the rules' wide-output cases).
bool is_wide_output(OpKey op, std::int64_t n, std::int64_t k);
// The dgrad ops whose output is an MLP's wide hidden layer: the SwiGLU and bias-GELU backward.
bool is_wide_dgrad(OpKey op);
// On the H200, a wide-output forward op (SwiGLU, RMSNorm + SwiGLU, bias-GELU with or without Pre,
// the loss-only cross-entropy; N >= 2K) walks along M with swizzle 1 where the rule walks along N
// with Pingpong 128x128 over fewer tile rows than columns, up to M = kH200AlongMRows
// (kH200AlongMVocabRows for a vocabulary-wide N >= 16K). Its higher memory bandwidth makes A's
// re-reads along M cheaper than B's along N: on the H200's tuner logs (M = 4096, 5793, 8192, 11585,
// 16384; 8B, Qwen3-8B and 1B widths; every candidate in the same rounds) along M with swizzle 1
// was the best or within 2 % of it on every SwiGLU row up to M = 11585, and 1.25 x the best at
// 16384 (8B); the cross-entropy's up to 5793 and 1.10-1.29 x from 8192. Priced on those 124
// forward rows the rule alone is within 0.92 of the best on 106 (was 84; 100 with each M held out
// of the fit), geomean 0.963 (0.943), no held-out M worse (bench/RESULTS.md, forty-first session).
// Every other GPU and op: `rule`.
constexpr std::int64_t kH200AlongMRows = 12288;      // between the measured 11585 and 16384
constexpr std::int64_t kH200AlongMVocabRows = 6144;  // between the measured 5793 and 8192
gemm::KernelChoice along_m_where_measured(gemm::TunedGpu gpu, OpKey op, std::int64_t m,
                                          std::int64_t n, std::int64_t k,
                                          const gemm::KernelChoice& rule);
// On the H200, the RMSNorm backward's kernel below K = 8192 (the QKV dgrad), as
// forward_program_rule's (the epilogue's share of a tile's time is larger over a short K, and
// Pingpong hides it): Pingpong 128×128 along N with swizzle 1, below 32768 rows. On the H200's op
// tuner rows of that dgrad (K = 3072 and 6144; M = 4096–16384; 1B, 8B and Qwen3-8B widths) it is
// within 0.92 of the best candidate on 32 of 32 (the rule before it, the dgrad GEMM's raster in
// Cooperative: 16 of 23 priced), and A/B'd at Qwen2.5-7B's widths with eager PyTorch in the rounds
// it ran 0.933 and 0.976 × the old time at M = 5958 and 10000 (42nd session). The H100 keeps
// Cooperative: there it read 0.910 timed beside matmul alone but 1.019 with eager in the rounds,
// the context that reversed this very ranking before (docs/benchmarks.md §5.1), and its tuner rows
// at M = 46341–65536 put Cooperative first. The row bound is the H100's (its table row at 32768 is
// Cooperative); the H200 was measured up to 16384 rows.
constexpr std::int64_t kRmsnormBwdPingpongK = 8192;
constexpr std::int64_t kRmsnormBwdPingpongRows = 32768;
// An op's kernel where no tuned shape is near, at its call's M × N × K (TunedCall):
// - the forward ops, the loss-only cross-entropy among them: forward_program_rule (the
//   cross-entropy's own fixed choice, Pingpong along M with swizzle 8, ran 0.52–0.71 of the
//   best candidate's speed on the H100's tuned shapes, where the rule is within 0.92;
//   nineteenth session);
// - the RMSNorm backward (`linear_rmsnorm_bwd`): on the H200 below K = kRmsnormBwdPingpongK (the QKV
//   dgrad) and kRmsnormBwdPingpongRows, Pingpong 128×128 along N with swizzle 1; elsewhere the plain dgrad
//   GEMM's data-parallel kernel (its raster and swizzle, not the stream-K that fills a plain
//   GEMM's last wave) in Cooperative 128×256 2×1;
// - an MLP's wide dgrad (`linear_swiglu_bwd`, `linear_bias_gelu_bwd`: is_wide_dgrad): that dgrad
//   kernel in Pingpong 128×128, whose epilogue overlaps the other warp group's mainloop, then
//   wide_pingpong_where_measured;
// - a QK-norm op that saves Pre: its base op's choice (op_choice) in Pingpong; under Cooperative
//   the Pre tile's store stages (a 128 × 128 subtile) leave the mainloop two stages.
// `gpu`: whose GEMM table the dgrad ops' kernel comes from (gemm::current_tuned_gpu() when an op
// runs; another for a tool that asks what a GPU would run, `coda-bench choose`).
gemm::KernelChoice fallback_of(gemm::TunedGpu gpu, OpKey op, std::int64_t m, std::int64_t n,
                               std::int64_t k);
// The kernel for `op` at M × N × K on `gpu` when none is given: that GPU's tuned table
// (op_table_<gpu>.inc, nearest tuned shape), else fallback_of; either but a table row of this very
// shape with its swizzle fitted to the shape's tile grid (gemm::fit_swizzle, swizzle_fit_of).
gemm::KernelChoice op_choice(gemm::TunedGpu gpu, OpKey op, std::int64_t m, std::int64_t n,
                             std::int64_t k);
// The same where `gpu`'s table has no row near: fallback_of with its swizzle fitted — the rule alone
// (what `coda-bench choose --gpu h100-rule|h200-rule` prints for pricing a rule).
gemm::KernelChoice rule_choice(gemm::TunedGpu gpu, OpKey op, std::int64_t m, std::int64_t n,
                               std::int64_t k);
// Device scratch of at least `need` bytes (need_name says how to size it), 16-byte aligned.
void require_workspace(const ArgCheck& check, const void* workspace, std::size_t bytes,
                       std::size_t need, const char* need_name);
// The memory an op touches, checked at its boundary before anything is launched: no output
// overlaps another argument (ArgCheck::outputs_disjoint), `device` is current, and every non-null
// pointer is device memory on it — reported under the op's own argument names.
void require_memory(const ArgCheck& check, int device,
                    std::initializer_list<ArgCheck::Named> outputs,
                    std::initializer_list<ArgCheck::Named> inputs,
                    std::initializer_list<ArgCheck::InPlace> in_place = {});
// The per-head norm of an N-column fused QKV: heads positive, N = (q_heads + 2·kv_heads) ·
// head_dim with head_dim 64 or 128, γ_q and γ_k bf16 [head_dim], eps >= 0. Returns head_dim.
int require_qk_norm(const ArgCheck& check, const QkNorm& qk, std::int64_t n, const char* n_name,
                    int device);
// A stats buffer big enough for an m × n producer.
void require_stats_buffer(const ArgCheck& check, const RowNormStats& stats, std::int64_t m,
                          std::int64_t n);
// A stats object a producer has filled, for a consumer of m rows of `width` features (the
// consumer's K: statistics of another width would normalise by the wrong count).
void require_filled_stats(const ArgCheck& check, const RowNormStats& stats, std::int64_t m,
                          std::int64_t width, const char* width_name);
// The floats a producer writes into stats for an m × n output, and those a consumer reads, as
// views for the aliasing checks.
TensorView stats_written(const RowNormStats& stats, std::int64_t m, std::int64_t n);
TensorView stats_read(const RowNormStats& stats);

// The kernel for call.op at call.m × call.n × call.k: options.choice if set, else the one forced
// on the op for a benchmark (force_op_choice), either checked (a config the programs are compiled
// for, no stream-K); else op_choice. The same TunedCall then goes to launch_tuned, so the choice
// and the launch name one key and shape.
gemm::KernelChoice program_choice(const ArgCheck& check, const TunedCall& call,
                                  const OpOptions& options);

}  // namespace coda::ops::detail
