// SPDX-License-Identifier: BSD-3-Clause
// The forward ops reject bad input with a message naming the argument, before touching CUDA.
#include <gtest/gtest.h>

#include "coda/ops/linear_bias_gelu.hpp"
#include "coda/ops/linear_cross_entropy.hpp"
#include "coda/ops/linear_norm.hpp"
#include "coda/ops/linear_rope.hpp"
#include "coda/ops/linear_swiglu.hpp"
#include "coda/ops/linear_rmsnorm_bwd.hpp"
#include "coda/ops/linear_swiglu_bwd.hpp"
#include "coda/ops/qknorm_rope_bwd.hpp"
#include "coda/ops/rope_bwd.hpp"
#include "coda/ops/norm_stats.hpp"
#include "host/test_support.hpp"

namespace coda::ops {
namespace {

using coda::testing::error_of;

TensorView bf16(std::uintptr_t at, std::int64_t rows, std::int64_t cols) {
  return TensorView::matrix(reinterpret_cast<void*>(at), DType::kBF16, rows, cols);
}
TensorView vec(std::uintptr_t at, std::int64_t n, DType t) {
  return TensorView::vector(reinterpret_cast<void*>(at), t, n);
}

TEST(OpsValidation, NormChain) {
  const auto A = bf16(0x10000, 64, 128), W = bf16(0x20000, 256, 128);
  const auto X = bf16(0x30000, 64, 256), H = bf16(0x40000, 64, 256), R = bf16(0x50000, 64, 256);
  const auto w = vec(0x60000, 256, DType::kBF16);
  RowNormStats stats{reinterpret_cast<float*>(0x70000), norm_stats_floats(64, 256)};
  EXPECT_EQ(error_of([&] { linear_residual_rms(X, H, stats, A, W, bf16(0x50000, 64, 255), w); }),
            "coda::ops::linear_residual_rms: R: dim 1 must equal N = 256; got bf16[64, 255] strides (255, 1)");
  EXPECT_EQ(error_of([&] { linear_residual_rms(X, H, stats, A, W, R, vec(0x60000, 255, DType::kBF16)); }),
            "coda::ops::linear_residual_rms: norm_weight: dim 0 must equal the matching dim = 256; got "
            "bf16[255] strides (1)");
  RowNormStats small{stats.partials, 10};
  EXPECT_NE(error_of([&] { linear_residual_rms(X, H, small, A, W, R, w); }).find("stats.capacity: needs"),
            std::string::npos);
  // Each refused call left the stats it was given (small, and stats above) unfilled.
  for (const RowNormStats& refused : {stats, small}) {
    EXPECT_EQ(refused.width, 0) << "nothing written on failure";
    EXPECT_EQ(refused.layout.tiles, 0) << "nothing written on failure";
  }

  const auto D = bf16(0x30000, 64, 256);
  EXPECT_EQ(error_of([&] { linear_rmsnorm(D, A, W, stats, 1e-5f); }),
            "coda::ops::linear_rmsnorm: stats: not filled by a producer (width and layout are unset)");
  RowNormStats filled = stats;
  filled.layout = {2, 128};
  filled.width = 128;  // statistics of a K-wide X: only eps is wrong below
  EXPECT_EQ(error_of([&] { linear_rmsnorm(D, A, W, filled, -1.0f); }),
            "coda::ops::linear_rmsnorm: eps: must be non-negative");
  EXPECT_EQ(error_of([&] { rms_norm_stats(H, stats, X, vec(0x60001, 256, DType::kBF16)); }),
            "coda::ops::rms_norm_stats: norm_weight: must be 16-byte aligned");
}

TEST(OpsValidation, SwiGluAndRope) {
  const auto A = bf16(0x10000, 64, 128), W = bf16(0x20000, 256, 128);
  const auto Z = bf16(0x30000, 64, 256), Y = bf16(0x40000, 64, 128);
  EXPECT_EQ(error_of([&] { linear_swiglu(Z, bf16(0x40000, 64, 256), A, W); }),
            "coda::ops::linear_swiglu: Y: dim 1 must equal N = 128; got bf16[64, 256] strides (256, 1)");
  EXPECT_EQ(error_of([&] { linear_swiglu(Z, Y, A, bf16(0x20000, 255, 128)); }),
            "coda::ops::linear_swiglu: W_gate_up: needs an even number of rows (gate/up interleaved); got 255");
  const auto pos = vec(0x50000, 64, DType::kI32), freq = vec(0x60000, 256, DType::kF32);
  EXPECT_EQ(error_of([&] { linear_rope(Z, A, W, vec(0x50000, 64, DType::kI64), freq); }),
            "coda::ops::linear_rope: positions: dtype must be i32; got i64");
  OpOptions forced;
  forced.choice = gemm::KernelChoice{gemm::TileConfig::kCoop256x128Cluster1x2};
  EXPECT_EQ(error_of([&] { linear_rope(Z, A, W, pos, freq, nullptr, forced); }),
            "coda::ops::linear_rope: options.choice.config: linear_rope is compiled for "
            "coop_128x256_2x1, pingpong_128x128_2x1, pingpong_128x192_2x1, ovcoop_128x256_2x1; got "
            "coop_256x128_1x2");
  EXPECT_EQ(error_of([&] { linear_rope(Z, A, W, pos, vec(0x60000, 128, DType::kF32)); }),
            "coda::ops::linear_rope: frequencies: dim 0 must equal the matching dim = 256; got f32[128] "
            "strides (1)");

  // QK-norm: W has 256 rows = (q_heads + 2·kv_heads) · head_dim.
  QkNorm qk{vec(0x70000, 64, DType::kBF16), vec(0x71000, 64, DType::kBF16), 2, 1};
  QkNorm odd_heads = qk;
  odd_heads.q_heads = 3;
  EXPECT_EQ(error_of([&] { linear_qknorm_rope(Z, TensorView{}, A, W, pos, freq, odd_heads); }),
            "coda::ops::linear_qknorm_rope: W_qkv: rows must be (q_heads + 2·kv_heads) · head_dim "
            "with head_dim 64 or 128; got 256 for 5 heads");
  QkNorm short_gamma = qk;
  short_gamma.k_weight = vec(0x71000, 32, DType::kBF16);
  EXPECT_EQ(error_of([&] { linear_qknorm_rope(Z, TensorView{}, A, W, pos, freq, short_gamma); }),
            "coda::ops::linear_qknorm_rope: qk_norm.k_weight: dim 0 must equal the matching dim = 64; "
            "got bf16[32] strides (1)");
  QkNorm no_heads = qk;
  no_heads.kv_heads = 0;
  EXPECT_EQ(error_of([&] { linear_qknorm_rope(Z, TensorView{}, A, W, pos, freq, no_heads); }),
            "coda::ops::linear_qknorm_rope: qk_norm.q_heads/kv_heads: must be positive; got 2, 0");
  // QK-norm's epilogue subtile holds whole 128-column heads: no 192-column tile.
  OpOptions forced_192;
  forced_192.choice = gemm::KernelChoice{gemm::TileConfig::kPingpong128x192Cluster2x1};
  EXPECT_EQ(error_of([&] { linear_qknorm_rope(Z, TensorView{}, A, W, pos, freq, qk, nullptr, forced_192); }),
            "coda::ops::linear_qknorm_rope: options.choice.config: linear_qknorm_rope is compiled for "
            "coop_128x256_2x1, pingpong_128x128_2x1, ovcoop_128x256_2x1; got pingpong_128x192_2x1");
  EXPECT_EQ(error_of([&] { linear_qknorm_rope(Z, bf16(0x80000, 64, 128), A, W, pos, freq, qk); }),
            "coda::ops::linear_qknorm_rope: Pre: dim 1 must equal N = 256; got bf16[64, 128] "
            "strides (128, 1)");

  // The RMSNorm consumers check the producer's statistics and eps first, then (QK-norm) the norm
  // and Pre, in the order the forward-only ops above do.
  RowNormStats stats{reinterpret_cast<float*>(0x90000), norm_stats_floats(64, 128)};
  EXPECT_EQ(error_of([&] { linear_rmsnorm_rope(Z, A, W, stats, 1e-5f, pos, freq); }),
            "coda::ops::linear_rmsnorm_rope: stats: not filled by a producer (width and layout are unset)");
  RowNormStats filled = stats;
  filled.layout = {2, 128};
  filled.width = 128;
  EXPECT_EQ(error_of([&] { linear_rmsnorm_rope(Z, A, W, filled, -1.0f, pos, freq); }),
            "coda::ops::linear_rmsnorm_rope: eps: must be non-negative");
  EXPECT_EQ(error_of([&] { linear_rmsnorm_qknorm_rope(Z, TensorView{}, A, W, filled, -1.0f, pos, freq, qk); }),
            "coda::ops::linear_rmsnorm_qknorm_rope: eps: must be non-negative");
  EXPECT_EQ(error_of([&] { linear_rmsnorm_qknorm_rope(Z, TensorView{}, A, W, filled, 1e-5f, pos, freq, no_heads); }),
            "coda::ops::linear_rmsnorm_qknorm_rope: qk_norm.q_heads/kv_heads: must be positive; got 2, 0");
  EXPECT_EQ(error_of([&] { linear_rmsnorm_qknorm_rope(Z, bf16(0x80000, 64, 128), A, W, filled, 1e-5f, pos, freq, qk); }),
            "coda::ops::linear_rmsnorm_qknorm_rope: Pre: dim 1 must equal N = 256; got bf16[64, 128] "
            "strides (128, 1)");
}

TEST(OpsValidation, CrossEntropy) {
  const auto X = bf16(0x10000, 64, 128), W = bf16(0x20000, 1000, 128);
  const auto t32 = vec(0x30000, 64, DType::kI32), lse = vec(0x40000, 64, DType::kF32);
  const auto scalar = vec(0x50000, 1, DType::kF32), rows = vec(0x50000, 64, DType::kF32);
  void* ws = reinterpret_cast<void*>(0x60000);
  const std::size_t bytes = linear_cross_entropy_workspace_bytes(64, 1000);
  CrossEntropyOptions ce;  // mean
  EXPECT_EQ(error_of([&] { linear_cross_entropy(scalar, lse, X, W, vec(0x30000, 64, DType::kF32), ce, ws, bytes); }),
            "coda::ops::linear_cross_entropy: targets: dtype must be i32 or i64; got f32");
  EXPECT_EQ(error_of([&] { linear_cross_entropy(rows, lse, X, W, t32, ce, ws, bytes); }),
            "coda::ops::linear_cross_entropy: loss: dim 0 must equal the matching dim = 1; got f32[64] "
            "strides (1)");
  ce.reduction = Reduction::kNone;
  EXPECT_EQ(error_of([&] { linear_cross_entropy(rows, lse, X, W, t32, ce, ws, bytes - 4); }),
            "coda::ops::linear_cross_entropy: workspace_bytes: needs linear_cross_entropy_workspace_bytes(M, "
            "V) = " + std::to_string(bytes) + "; got " + std::to_string(bytes - 4));
  ce.z_loss = -1.0f;
  EXPECT_EQ(error_of([&] { linear_cross_entropy(rows, lse, X, W, t32, ce, ws, bytes); }),
            "coda::ops::linear_cross_entropy: ce.z_loss: must be finite and non-negative");
  // Forward + backward: gradients' shapes and dtypes, the chunk size.
  ce.z_loss = 0.0f;
  ce.reduction = Reduction::kMean;
  const auto dX = bf16(0x70000, 64, 128);
  const auto dW = TensorView::matrix(reinterpret_cast<void*>(0x80000), DType::kF32, 1000, 128);
  const std::size_t fb_bytes = linear_cross_entropy_fwd_bwd_workspace_bytes(64, 1000);
  CrossEntropyGrads g{dX, bf16(0x80000, 1000, 128)};
  EXPECT_EQ(error_of([&] { linear_cross_entropy_fwd_bwd(scalar, lse, g, X, W, t32, ce, ws, fb_bytes); }),
            "coda::ops::linear_cross_entropy_fwd_bwd: grads.dW: dtype must be f32; got bf16");
  g.dW = dW;
  g.alpha = vec(0x50000, 64, DType::kF32);  // per-row α only with reduction none
  EXPECT_EQ(error_of([&] { linear_cross_entropy_fwd_bwd(scalar, lse, g, X, W, t32, ce, ws, fb_bytes); }),
            "coda::ops::linear_cross_entropy_fwd_bwd: grads.alpha: dim 0 must equal the matching dim = 1; "
            "got f32[64] strides (1)");
  g.alpha = {};
  // One feature (H = 1), contiguous: both strides are 1, and rows 2 bytes apart cannot be TMA rows.
  EXPECT_EQ(error_of([&] {
              linear_cross_entropy_fwd_bwd(scalar, lse, g, bf16(0x10000, 64, 1), bf16(0x20000, 1000, 1),
                                           t32, ce, ws, fb_bytes);
            }),
            "coda::ops::linear_cross_entropy_fwd_bwd: X: the row stride must be a multiple of 16 bytes "
            "(TMA); got bf16[64, 1] strides (1, 1)");
  ce.chunk_rows = 100;
  EXPECT_EQ(error_of([&] { linear_cross_entropy_fwd_bwd(scalar, lse, g, X, W, t32, ce, ws, fb_bytes); }),
            "coda::ops::linear_cross_entropy_fwd_bwd: ce.chunk_rows: must be 0 (automatic) or a positive "
            "multiple of 128; got 100");
  ce.chunk_rows = 0;
  ce.reduction = Reduction::kNone;
  ce.softcap = -30.0f;
  EXPECT_EQ(error_of([&] { linear_cross_entropy(rows, lse, X, W, t32, ce, ws, bytes); }),
            "coda::ops::linear_cross_entropy: ce.softcap: must be finite and non-negative (0: no "
            "soft-cap)");
}

// The fwd+bwd op's automatic chunks: the fewest of at most ~2 GiB of bf16 logits, made equal
// (multiples of 128); its workspace is one chunk's logits plus three floats a row and a count.
TEST(OpsValidation, CrossEntropyChunksAreFewAndEqual) {
  auto logits_rows = [](std::int64_t m, std::int64_t v, std::int64_t asked = 0) {
    const std::int64_t ld = (v + 7) / 8 * 8, tail = (2 * ((m + 3) / 4 * 4) + 4) * 4;
    const auto bytes = std::int64_t(linear_cross_entropy_fwd_bwd_workspace_bytes(m, v, asked));
    EXPECT_EQ((bytes - tail) % (2 * ld), 0);
    return (bytes - tail) / (2 * ld);
  };
  // Qwen3-8B widths: at most 7040 rows a chunk (2 GiB / (2 · 151936)), so 16384 rows go in three
  // chunks of 5504 (not 7040, 7040, 2304).
  EXPECT_EQ(logits_rows(16384, 151936), 5504);
  EXPECT_EQ(logits_rows(7040, 151936), 7040);       // one full chunk
  EXPECT_EQ(logits_rows(7041, 151936), 3584);       // two: ceil(7041 / 2) = 3521, to 128
  EXPECT_EQ(logits_rows(1000, 151936), 1000);       // fewer rows than a chunk: the rows
  EXPECT_EQ(logits_rows(16384, 151936, 256), 256);  // asked
  EXPECT_EQ(logits_rows(100, 151936, 256), 100);
  EXPECT_EQ(logits_rows(300, 1 << 24), 128);  // a huge vocabulary: 128 rows at least
}

TEST(OpsValidation, SwiGluBackward) {
  // dOut [64, 128], W_down [128, 96] (F = 96), Z / dZ [64, 192], Y [64, 96].
  const auto dOut = bf16(0x10000, 64, 128), W = bf16(0x20000, 128, 96);
  const auto Z = bf16(0x30000, 64, 192), dZ = bf16(0x40000, 64, 192), Y = bf16(0x50000, 64, 96);
  const auto zdz = vec(0x58000, 64, DType::kF32);
  void* ws = reinterpret_cast<void*>(0x60000);
  const std::size_t bytes = linear_swiglu_bwd_workspace_bytes(64, 96);
  EXPECT_EQ(error_of([&] { linear_swiglu_bwd(dZ, Y, zdz, dOut, bf16(0x20000, 96, 128), Z, ws, bytes); }),
            "coda::ops::linear_swiglu_bwd: W_down: dim 0 must equal dOut's columns = 128; got "
            "bf16[96, 128] strides (128, 1)");
  EXPECT_EQ(error_of([&] { linear_swiglu_bwd(dZ, Y, zdz, dOut, W, bf16(0x30000, 64, 96), ws, bytes); }),
            "coda::ops::linear_swiglu_bwd: Z: dim 1 must equal N = 192; got bf16[64, 96] strides (96, 1)");
  EXPECT_EQ(error_of([&] { linear_swiglu_bwd(dZ, Y, vec(0x58000, 64, DType::kBF16), dOut, W, Z, ws, bytes); }),
            "coda::ops::linear_swiglu_bwd: zdz: dtype must be f32; got bf16");
  EXPECT_EQ(error_of([&] { linear_swiglu_bwd(dZ, Y, zdz, dOut, W, Z, ws, bytes - 4); }),
            "coda::ops::linear_swiglu_bwd: workspace_bytes: needs linear_swiglu_bwd_workspace_bytes(M, F) = " +
                std::to_string(bytes) + "; got " + std::to_string(bytes - 4));
}

TEST(OpsValidation, BiasGelu) {
  // X [64, 128] · W [256, 128]ᵀ + b [256] → Y, Pre [64, 256].
  const auto X = bf16(0x10000, 64, 128), W = bf16(0x20000, 256, 128);
  const auto Y = bf16(0x30000, 64, 256), Pre = bf16(0x40000, 64, 256);
  const auto b = vec(0x50000, 256, DType::kBF16);
  EXPECT_EQ(error_of([&] { linear_bias_gelu(Y, Pre, X, W, vec(0x50000, 255, DType::kBF16)); }),
            "coda::ops::linear_bias_gelu: bias: dim 0 must equal the matching dim = 256; got bf16[255] "
            "strides (1)");
  EXPECT_EQ(error_of([&] { linear_bias_gelu(Y, Pre, X, W, vec(0x50000, 256, DType::kF32)); }),
            "coda::ops::linear_bias_gelu: bias: dtype must be bf16; got f32");
  EXPECT_EQ(error_of([&] { linear_bias_gelu(Y, Pre, X, bf16(0x20000, 256, 120), b); }),
            "coda::ops::linear_bias_gelu: W: dim 1 must equal K (the input's dim 1) = 128; got bf16[256, 120] "
            "strides (120, 1)");
  EXPECT_EQ(error_of([&] { linear_bias_gelu(Y, bf16(0x40000, 64, 128), X, W, b); }),
            "coda::ops::linear_bias_gelu: Pre: dim 1 must equal N = 256; got bf16[64, 128] strides (128, 1)");
  EXPECT_EQ(error_of([&] { linear_bias_gelu(Y, Y, X, W, b); }),
            "coda::ops::linear_bias_gelu: Y: overlaps Pre in memory (an output must not share memory with "
            "any other argument)");

  // Backward: dOut [64, 96] · W_down [96, 256] → dPre [64, 256], dbias [256].
  const auto dOut = bf16(0x60000, 64, 96), Wd = bf16(0x70000, 96, 256), dPre = bf16(0x80000, 64, 256);
  const auto db = vec(0x90000, 256, DType::kF32);
  void* ws = reinterpret_cast<void*>(0xa0000);
  const std::size_t bytes = linear_bias_gelu_bwd_workspace_bytes(64, 256);
  EXPECT_EQ(bytes, 4u * 1 * 768)
      << "one M-tile of 128 rows × N padded to 768, the lcm of the 128-, 192- and 256-column tiles";
  EXPECT_EQ(error_of([&] { linear_bias_gelu_bwd(dPre, db, dOut, bf16(0x70000, 95, 256), Pre, ws, bytes); }),
            "coda::ops::linear_bias_gelu_bwd: W_down: dim 0 must equal dOut's columns = 96; got bf16[95, 256] "
            "strides (256, 1)");
  EXPECT_EQ(error_of([&] { linear_bias_gelu_bwd(dPre, db, dOut, Wd, bf16(0x40000, 64, 255), ws, bytes); }),
            "coda::ops::linear_bias_gelu_bwd: Pre: dim 1 must equal N = 256; got bf16[64, 255] strides (255, 1)");
  EXPECT_EQ(error_of([&] { linear_bias_gelu_bwd(dPre, vec(0x90000, 256, DType::kBF16), dOut, Wd, Pre, ws, bytes); }),
            "coda::ops::linear_bias_gelu_bwd: dbias: dtype must be f32; got bf16");
  EXPECT_EQ(error_of([&] { linear_bias_gelu_bwd(dPre, db, dOut, Wd, Pre, ws, bytes - 4); }),
            "coda::ops::linear_bias_gelu_bwd: workspace_bytes: needs linear_bias_gelu_bwd_workspace_bytes(M, N) = " +
                std::to_string(bytes) + "; got " + std::to_string(bytes - 4));
  EXPECT_EQ(error_of([&] { linear_bias_gelu_bwd(Pre, db, dOut, Wd, Pre, ws, bytes); }),
            "coda::ops::linear_bias_gelu_bwd: dPre: overlaps Pre in memory (an output must not share memory "
            "with any other argument)");
}

TEST(OpsValidation, RmsNormBackward) {
  // dZ [64, 96] · W [96, 128] → dX, N [64, 128]; stats of a 128-wide X.
  const auto dZ = bf16(0x10000, 64, 96), W = bf16(0x20000, 96, 128), X = bf16(0x30000, 64, 128);
  const auto dX = bf16(0x40000, 64, 128), N = bf16(0x50000, 64, 128);
  const auto dw = vec(0x58000, 128, DType::kF32), zdz = vec(0x59000, 64, DType::kF32);
  RmsNormSaved saved{X, {reinterpret_cast<float*>(0x70000), norm_stats_floats(64, 128)},
                     vec(0x5a000, 128, DType::kBF16), 1e-5f};
  void* ws = reinterpret_cast<void*>(0x60000);
  const std::size_t bytes = linear_rmsnorm_bwd_workspace_bytes(64, 128);
  EXPECT_EQ(error_of([&] { linear_rmsnorm_bwd(dX, false, N, dw, dZ, W, saved, zdz, ws, bytes); }),
            "coda::ops::linear_rmsnorm_bwd: stats: not filled by a producer (width and layout are unset)");
  saved.stats.layout = {1, 64};
  saved.stats.width = 120;
  EXPECT_EQ(error_of([&] { linear_rmsnorm_bwd(dX, false, N, dw, dZ, W, saved, zdz, ws, bytes); }),
            "coda::ops::linear_rmsnorm_bwd: stats.width: the statistics must be of D (W's columns) = 128 features; "
            "got 120");
  saved.stats.width = 128;
  EXPECT_EQ(error_of([&] { linear_rmsnorm_bwd(dX, false, N, dw, dZ, bf16(0x20000, 95, 128), saved, zdz, ws, bytes); }),
            "coda::ops::linear_rmsnorm_bwd: W: dim 0 must equal dZ's columns = 96; got bf16[95, 128] strides (128, 1)");
  EXPECT_EQ(error_of([&] { linear_rmsnorm_bwd(dX, false, N, dw, dZ, W, saved, zdz, ws, bytes,
                                              vec(0x5b000, 2, DType::kF32)); }),
            "coda::ops::linear_rmsnorm_bwd: alpha: dim 0 must equal the matching dim = 1; got f32[2] strides (1)");
}

TEST(OpsValidation, RopeBackward) {
  const auto Y = bf16(0x10000, 64, 256), dY = bf16(0x20000, 64, 256);
  const auto zdz = vec(0x30000, 64, DType::kF32), pos = vec(0x31000, 64, DType::kI32);
  const auto freq = vec(0x32000, 256, DType::kF32);
  EXPECT_EQ(error_of([&] { rope_bwd(bf16(0x40000, 64, 256), zdz, Y, bf16(0x20000, 64, 255), pos, freq); }),
            "coda::ops::rope_bwd: dQKV: dim 1 must equal N = 256; got bf16[64, 255] strides (255, 1)");
  // dZ a few rows into dQKV: a partial overlap (in place, dZ = dQKV, is allowed).
  EXPECT_EQ(error_of([&] { rope_bwd(bf16(0x20000 + 512, 64, 256), zdz, Y, dY, pos, freq); }),
            "coda::ops::rope_bwd: dZ: may be dQKV itself (in place: same pointer, shape and strides) but must "
            "not overlap it otherwise; got bf16[64, 256] strides (256, 1) and bf16[64, 256] strides (256, 1)");
  EXPECT_EQ(error_of([&] { rope_bwd(dY, zdz, Y, dY, vec(0x31000, 64, DType::kI64), freq); }),
            "coda::ops::rope_bwd: positions: dtype must be i32; got i64");
  // Attention's dQ | dK | dV as three blocks (qkv_grad.hpp): multiples of 8 columns adding up to N.
  const auto dZ = bf16(0x40000, 64, 256), dq = bf16(0x50000, 64, 128), dv = bf16(0x5c000, 64, 64);
  EXPECT_EQ(error_of([&] { rope_bwd(dZ, zdz, Y, QkvGrad{dq, bf16(0x58000, 64, 60), dv}, pos, freq); }),
            "coda::ops::rope_bwd: dQKV.k: a block of a split gradient must be a multiple of 8 columns "
            "wide; got 60");
  EXPECT_EQ(error_of([&] { rope_bwd(dZ, zdz, Y, QkvGrad{dq, bf16(0x58000, 64, 8), dv}, pos, freq); }),
            "coda::ops::rope_bwd: dQKV: the blocks' widths add up to 200, not N = 256");
  EXPECT_EQ(error_of([&] { rope_bwd(dZ, zdz, Y, QkvGrad{dq, TensorView{}, dv}, pos, freq); }),
            "coda::ops::rope_bwd: dQKV.k: data pointer is null");
}

TEST(OpsValidation, QkNormRopeBackward) {
  // 256 columns = (2 + 2·1) heads of 64.
  const auto pre = bf16(0x10000, 64, 256), dY = bf16(0x20000, 64, 256), dpre = bf16(0x40000, 64, 256);
  const auto zdz = vec(0x30000, 64, DType::kF32), pos = vec(0x31000, 64, DType::kI32);
  const auto freq = vec(0x32000, 256, DType::kF32);
  const QkNorm qk{vec(0x33000, 64, DType::kBF16), vec(0x34000, 64, DType::kBF16), 2, 1};
  const QkNormGrads dg{vec(0x35000, 64, DType::kF32), vec(0x36000, 64, DType::kF32)};
  void* ws = reinterpret_cast<void*>(0x50000);
  const std::size_t bytes = qknorm_rope_bwd_workspace_bytes(64, 64);
  EXPECT_EQ(bytes, 4u * 2 * 64 * 4) << "4 blocks of 16 rows, ∂γ_q and ∂γ_k";
  EXPECT_EQ(error_of([&] { qknorm_rope_bwd(dpre, zdz, dg, pre, dY, pos, freq, qk, ws, bytes - 4); }),
            "coda::ops::qknorm_rope_bwd: workspace_bytes: needs qknorm_rope_bwd_workspace_bytes(M, "
            "head_dim) = 2048; got 2044");
  QkNorm three_q = qk;
  three_q.q_heads = 3;
  EXPECT_EQ(error_of([&] { qknorm_rope_bwd(dpre, zdz, dg, pre, dY, pos, freq, three_q, ws, bytes); }),
            "coda::ops::qknorm_rope_bwd: Pre: columns must be (q_heads + 2·kv_heads) · head_dim with "
            "head_dim 64 or 128; got 256 for 5 heads");
  const QkNormGrads bf16_grads{vec(0x35000, 64, DType::kBF16), dg.k_weight};
  EXPECT_EQ(error_of([&] { qknorm_rope_bwd(dpre, zdz, bf16_grads, pre, dY, pos, freq, qk, ws, bytes); }),
            "coda::ops::qknorm_rope_bwd: dgamma.q_weight: dtype must be f32; got bf16");
  EXPECT_EQ(error_of([&] { qknorm_rope_bwd(pre, zdz, dg, pre, dY, pos, freq, qk, ws, bytes); }),
            "coda::ops::qknorm_rope_bwd: dPre: overlaps Pre in memory (an output must not share memory with "
            "any other argument)");
  EXPECT_EQ(error_of([&] { qknorm_rope_bwd(bf16(0x20000 + 512, 64, 256), zdz, dg, pre, dY, pos, freq, qk, ws, bytes); }),
            "coda::ops::qknorm_rope_bwd: dPre: may be dQKV itself (in place: same pointer, shape and strides) "
            "but must not overlap it otherwise; got bf16[64, 256] strides (256, 1) and bf16[64, 256] strides "
            "(256, 1)");
  EXPECT_EQ(error_of([&] { qknorm_rope_bwd(dpre, zdz, dg, pre, bf16(0x20000, 63, 256), pos, freq, qk, ws, bytes); }),
            "coda::ops::qknorm_rope_bwd: dQKV: dim 0 must equal M = 64; got bf16[63, 256] strides (256, 1)");
}

}  // namespace
}  // namespace coda::ops
