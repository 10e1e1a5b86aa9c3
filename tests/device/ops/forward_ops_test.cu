// SPDX-License-Identifier: BSD-3-Clause
// The forward ops against the float64 *standard* Llama computation (reference/llama.hpp: Hugging
// Face's RMSNorm, separate gate/up, rotate-half RoPE), with weights converted by weights.hpp,
// under the numerics contract (docs/numerics.md); the framework model rounds every intermediate to
// bf16 where a bf16 model stores it. Ragged and Llama-1B widths, M = 1 … 1000, fresh seeds,
// poisoned outputs. The float64 GEMMs run on the GPU (gemm_ref64) with fp32-rounded inputs where
// the input is a float64 intermediate (relative 6e-8, far below the bf16 tolerances).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "coda/ops/linear_bias_gelu.hpp"
#include "coda/ops/linear_cross_entropy.hpp"
#include "coda/ops/linear_norm.hpp"
#include "coda/ops/linear_rope.hpp"
#include "coda/ops/linear_swiglu.hpp"
#include "coda/ops/norm_stats.hpp"
#include "coda/ops/weights.hpp"
#include "device/device_buffer.hpp"
#include "device/device_matrix.hpp"
#include "device/ops/ops_test_support.hpp"
#include "device/gemm_oracle.hpp"
#include "host/test_support.hpp"
#include "reference/bf16.hpp"
#include "reference/llama.hpp"

namespace coda::ops {
namespace {

using ref::Matrix;
using testing::DeviceBuffer;
using testing::DeviceMatrix;
using testing::download;
using testing::meets_contract;
using testing::output;
using testing::upload;

constexpr double kEps = 1e-5;

// [W_gate; W_up] interleaved by row (gate_up_interleave_rows), as linear_swiglu takes it.
Matrix interleaved_gate_up(const Matrix& w_gate, const Matrix& w_up) {
  Matrix w_cat(2 * w_gate.rows, w_gate.cols);
  std::copy(w_gate.v.begin(), w_gate.v.end(), w_cat.v.begin());
  std::copy(w_up.v.begin(), w_up.v.end(), w_cat.v.begin() + w_gate.v.size());
  return ref::permute_rows(w_cat, gate_up_interleave_rows(w_gate.rows));
}

struct ChainShape {
  int m, hidden, attn, ffn, next;  // X: m × hidden; A: m × attn; W_gu: 2·ffn × hidden
  bool extreme;                    // rows of RMS 1e-20 … 1e17 (row_scales)
};

// X = A·W_oᵀ + R (→ H, stats);  RMSNorm(X)·W_nextᵀ;  SwiGLU(RMSNorm(X)·[W_g; W_u]ᵀ). Ragged,
// Llama-1B and -70B widths (hidden 8192), M up to 16383, rows of RMS from 1e-20 to near overflow;
// K = 1 (attn 1 for X's GEMM, hidden 1 for the consumers'; 300 rows: with a handful of elements
// the framework's largest error is a small sample of its tail, and the bound flaky) and N % 8 ≠ 0; each op under its own
// kernel choice and both forced configs (kernel_choices).
TEST(ForwardOps, NormChainAgainstStandardForward) {
  std::mt19937_64 rng(testing::fresh_seed("ForwardOps.NormChainAgainstStandardForward"));
  const ChainShape shapes[] = {{1, 520, 776, 260, 1000, false},    {199, 2048, 2048, 8192, 2048, false},
                               {1000, 520, 776, 260, 1000, true},  {16383, 520, 776, 260, 1000, true},
                               {33, 8192, 8192, 520, 1000, true},  {130, 261, 1, 100, 333, true},
                               {300, 1, 7, 5, 9, false}};
  for (const ChainShape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " hidden " + std::to_string(s.hidden));
    // X's rows get the scales through both of its summands; at hidden = attn = 8192, RMS(X) ≈
    // 2.9 · 3e16, so Σx² ≈ 6e37 is within 6× of fp32 overflow.
    const std::vector<double> scales = row_scales(s.m, s.extreme, 3e16);
    const Matrix a = scale_rows(random_bf16(s.m, s.attn, rng, 1.0), scales);
    const Matrix w_o = random_bf16(s.hidden, s.attn, rng, 0.03);
    const Matrix r = scale_rows(random_bf16(s.m, s.hidden, rng, 1.0), scales);
    const std::vector<double> gamma = random_norm_weight(s.hidden, rng);
    const Matrix w_next = random_bf16(s.next, s.hidden, rng, 0.03);
    const Matrix w_gate = random_bf16(s.ffn, s.hidden, rng, 0.03), w_up = random_bf16(s.ffn, s.hidden, rng, 0.03);
    const Matrix w_gu = interleaved_gate_up(w_gate, w_up);

    // Standard forward, float64, and as a bf16 framework runs it.
    const Matrix x64 = ref::add(linear64(a, w_o), r);
    const Matrix n64 = ref::rms_norm(x64, gamma, kEps);
    const Matrix d64 = linear64(n64, w_next), z64 = linear64(n64, w_gu);
    const Matrix y64 = ref::silu_mul(linear64(n64, w_gate), linear64(n64, w_up));
    const Matrix x_fw = ref::round_to_bf16(ref::add(linear_framework(a, w_o), r));
    const Matrix n_fw = ref::rms_norm_framework(x_fw, gamma, kEps);
    const Matrix d_fw = deferred_norm_framework(d64, linear_framework(n_fw, w_next), s.hidden),
                 z_fw = deferred_norm_framework(z64, linear_framework(n_fw, w_gu), s.hidden);
    // Hugging Face: act_fn(gate_proj(x)) * up_proj(x), each op rounding to bf16.
    const Matrix y_fw = ref::round_to_bf16(ref::hadamard(
        ref::round_to_bf16(ref::silu(linear_framework(n_fw, w_gate))), linear_framework(n_fw, w_up)));

    DeviceMatrix d_a = upload(a), d_wo = upload(w_o), d_r = upload(r), d_wn = upload(w_next),
                 d_wgu = upload(w_gu);
    DeviceBuffer d_gamma = upload_bf16_vector(gamma);
    auto contract = [&](const std::vector<double>& got, const Matrix& r64, const Matrix& fw, const char* what) {
      return meets_contract_by_row_scale(got, r64.v, fw.v, scales, what);
    };
    for (const OpOptions& options : kernel_choices(OpKey::kLinearResidualRms, s.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceMatrix x = output(s.m, s.hidden), h = output(s.m, s.hidden), d = output(s.m, s.next),
                   z = output(s.m, 2 * s.ffn), y = output(s.m, s.ffn), y_no_z = output(s.m, s.ffn);
      DeviceBuffer partials(norm_stats_floats(s.m, s.hidden) * 4);
      partials.poison();
      RowNormStats stats{partials.get<float>(), norm_stats_floats(s.m, s.hidden)};
      linear_residual_rms(x.view(), h.view(), stats, d_a.view(), d_wo.view(), d_r.view(),
                          vector_view(d_gamma, s.hidden, DType::kBF16), nullptr, options);
      linear_rmsnorm(d.view(), h.view(), d_wn.view(), stats, float(kEps), nullptr,
                     for_op(options, OpKey::kLinearRmsnorm));
      linear_rmsnorm_swiglu(z.view(), y.view(), h.view(), d_wgu.view(), stats, float(kEps), nullptr,
                            for_op(options, OpKey::kLinearRmsnormSwiglu));
      linear_rmsnorm_swiglu(TensorView{}, y_no_z.view(), h.view(), d_wgu.view(), stats, float(kEps), nullptr,
                            for_op(options, OpKey::kLinearRmsnormSwiglu));
      CODA_CHECK_CUDA(cudaDeviceSynchronize());

      bool pad[6];
      EXPECT_TRUE(contract(download(x, &pad[0]).v, x64, x_fw, "X = A·W_oᵀ + R"));
      EXPECT_TRUE(contract(download(h, &pad[1]).v, ref::mul_per_col(x64, gamma),
                           ref::round_to_bf16(ref::mul_per_col(x_fw, gamma)), "H = X ⊙ w"));
      EXPECT_TRUE(contract(download(d, &pad[2]).v, d64, d_fw, "RMSNorm(X)·W_nextᵀ"));
      EXPECT_TRUE(contract(download(z, &pad[3]).v, z64, z_fw, "Z = RMSNorm(X)·W_guᵀ"));
      EXPECT_TRUE(contract(download(y, &pad[4]).v, y64, y_fw, "Y = SwiGLU"));
      EXPECT_EQ(download(y_no_z, &pad[5]).v, download(y, &pad[4]).v) << "Y without Z: same bits";
      for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
    }
  }
}

// RMSNorm (first block: rms_norm_stats) → fused QKV → RoPE, against Hugging Face's rotate-half
// RoPE with GQA, positions past 100k with per-document resets; and linear_rope / linear_swiglu.
// K = 1 (hidden 1) and N % 8 ≠ 0 (small heads); each op under its own kernel choice and both
// forced configs (kernel_choices).
TEST(ForwardOps, RopeAndSwiGluAgainstStandardForward) {
  std::mt19937_64 rng(testing::fresh_seed("ForwardOps.RopeAndSwiGluAgainstStandardForward"));
  struct RopeShape { int m, hidden, q_heads, kv_heads, hd; bool extreme; };
  const RopeShape shapes[] = {{1, 2048, 32, 8, 64, false},   {199, 520, 4, 2, 128, false},
                              {1000, 2048, 32, 8, 64, true}, {16383, 520, 4, 2, 128, true},
                              {33, 8192, 64, 8, 128, true},  {130, 1, 3, 1, 6, false},
                              {77, 261, 3, 1, 10, true}};
  for (const RopeShape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " hd " + std::to_string(s.hd) + " hidden " +
                 std::to_string(s.hidden));
    const int rotated_heads = s.q_heads + s.kv_heads, n = (s.q_heads + 2 * s.kv_heads) * s.hd;
    const std::vector<double> scales = row_scales(s.m, s.extreme, 1e17);
    const Matrix x = scale_rows(random_bf16(s.m, s.hidden, rng, 1.0), scales);
    const Matrix w_qkv = random_bf16(n, s.hidden, rng, 0.03);
    const std::vector<double> gamma = random_norm_weight(s.hidden, rng);
    std::vector<std::int64_t> pos(s.m);
    std::uniform_int_distribution<std::int64_t> start(100000, 1000000);
    for (int m = 0, p = int(start(rng)); m < s.m; ++m, ++p) {
      if (m % 300 == 299) p = 0;
      pos[m] = p;
    }
    std::vector<std::int64_t> rows = rope_interleave_rows(rotated_heads, s.hd);
    for (int r = rotated_heads * s.hd; r < n; ++r) rows.push_back(r);
    const Matrix w_perm = ref::permute_rows(w_qkv, rows);
    // The reference's own frequencies; the library's table only as the kernels' input.
    const std::vector<double> inv = ref::rope_inverse_frequencies(s.hd, 500000.0);
    const std::vector<float> table = rope_frequencies(s.q_heads, s.kv_heads, s.hd, 500000.0);

    // Standard: HF RMSNorm → q/k/v projection → rotate-half RoPE; compared in our column order.
    const Matrix q64 = ref::permute_cols(
        ref::rope_rotate_half(linear64(ref::rms_norm(x, gamma, kEps), w_qkv), pos, inv, rotated_heads, s.hd), rows);
    const Matrix q_fw = ref::permute_cols(ref::round_to_bf16(ref::rope_rotate_half(
        linear_framework(ref::rms_norm_framework(x, gamma, kEps), w_qkv), pos, inv, rotated_heads, s.hd)), rows);
    const Matrix plain64 = ref::permute_cols(ref::rope_rotate_half(linear64(x, w_qkv), pos, inv, rotated_heads, s.hd), rows);
    const Matrix plain_fw = ref::permute_cols(ref::round_to_bf16(ref::rope_rotate_half(
        linear_framework(x, w_qkv), pos, inv, rotated_heads, s.hd)), rows);
    // linear_swiglu on the same input, F = n / 2 (an interleaved weight, standard halves).
    const int ffn = n / 2;
    const Matrix w_gate = random_bf16(ffn, s.hidden, rng, 0.03), w_up = random_bf16(ffn, s.hidden, rng, 0.03);
    const Matrix w_gu = interleaved_gate_up(w_gate, w_up);
    const Matrix z64 = linear64(x, w_gu), z_fw = linear_framework(x, w_gu);
    const Matrix y64 = ref::silu_mul(linear64(x, w_gate), linear64(x, w_up));
    const Matrix y_fw = ref::round_to_bf16(ref::hadamard(
        ref::round_to_bf16(ref::silu(linear_framework(x, w_gate))), linear_framework(x, w_up)));

    DeviceMatrix d_x = upload(x), d_w = upload(w_perm), d_wgu = upload(w_gu);
    DeviceBuffer d_gamma = upload_bf16_vector(gamma), d_pos(s.m * 4), d_freq(table.size() * 4);
    d_pos.upload(std::vector<std::int32_t>(pos.begin(), pos.end()));
    d_freq.upload(table);
    const TensorView positions = vector_view(d_pos, s.m, DType::kI32),
                     frequencies = vector_view(d_freq, n, DType::kF32);
    auto contract = [&](const std::vector<double>& got, const Matrix& r64, const Matrix& fw, const char* what) {
      return meets_contract_by_row_scale(got, r64.v, fw.v, scales, what);
    };
    for (const OpOptions& options : kernel_choices(OpKey::kLinearRope, s.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceMatrix h = output(s.m, s.hidden), qkv = output(s.m, n), qkv_plain = output(s.m, n);
      DeviceMatrix z = output(s.m, n), y = output(s.m, ffn), y_no_z = output(s.m, ffn);
      DeviceBuffer partials(norm_stats_floats(s.m, s.hidden) * 4);
      partials.poison();
      RowNormStats stats{partials.get<float>(), norm_stats_floats(s.m, s.hidden)};
      rms_norm_stats(h.view(), stats, d_x.view(), vector_view(d_gamma, s.hidden, DType::kBF16));
      linear_rmsnorm_rope(qkv.view(), h.view(), d_w.view(), stats, float(kEps), positions, frequencies,
                          nullptr, for_op(options, OpKey::kLinearRmsnormRope));
      linear_rope(qkv_plain.view(), d_x.view(), d_w.view(), positions, frequencies, nullptr, options);
      linear_swiglu(z.view(), y.view(), d_x.view(), d_wgu.view(), nullptr, options);
      linear_swiglu(TensorView{}, y_no_z.view(), d_x.view(), d_wgu.view(), nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool pad[6];
      EXPECT_TRUE(contract(download(h, &pad[0]).v, ref::mul_per_col(x, gamma),
                           ref::round_to_bf16(ref::mul_per_col(x, gamma)), "H = X ⊙ w"));
      EXPECT_TRUE(contract(download(qkv, &pad[1]).v, q64, q_fw, "RoPE(RMSNorm(X)·W_qkvᵀ)"));
      EXPECT_TRUE(contract(download(qkv_plain, &pad[2]).v, plain64, plain_fw, "RoPE(X·W_qkvᵀ)"));
      EXPECT_TRUE(contract(download(z, &pad[3]).v, z64, z_fw, "Z = X·W_guᵀ"));
      EXPECT_TRUE(contract(download(y, &pad[4]).v, y64, y_fw, "Y = SwiGLU(X)"));
      EXPECT_EQ(download(y_no_z, &pad[5]).v, download(y, &pad[4]).v) << "Y without Z: same bits";
      for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
    }
  }
}

// QK-norm (Qwen3 / OLMo-2: per-head RMSNorm of Q and K with γ_q, γ_k) then RoPE, in the epilogue,
// with and without the deferred input RMSNorm; hd 64 and 128, GQA 32/8 at Llama-1B and -8B widths,
// M = 1 … 1000, K = 2 (one K-block, nearly all padding), positions past 100k with resets, heads of
// very different magnitude (the contract per row and head scale); each op under its own kernel
// choice and both forced configs. Not K = 1: there x · rstd = ±1, so the standard RMSNorm's bf16
// output is γ exactly and the framework's V heads carry one rounding where the deferred norm
// carries two (x ⊙ γ, then the output), and 2 × the framework's error failed by 2 % on a seed.
TEST(ForwardOps, QkNormRopeAgainstStandardForward) {
  std::mt19937_64 rng(testing::fresh_seed("ForwardOps.QkNormRopeAgainstStandardForward"));
  struct QkShape { int m, hidden, q_heads, kv_heads, hd; bool extreme; };
  const QkShape shapes[] = {{1, 520, 4, 2, 128, false},       {199, 2048, 32, 8, 64, false},
                            {1000, 4096, 32, 8, 128, false},  {333, 1032, 5, 1, 64, true},
                            {16383, 520, 4, 2, 64, true},     {33, 8192, 64, 8, 128, true},
                            {130, 2, 2, 1, 64, false}};
  for (const QkShape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " hd " + std::to_string(s.hd) + " heads " +
                 std::to_string(s.q_heads) + "/" + std::to_string(s.kv_heads));
    const int rotated_heads = s.q_heads + s.kv_heads, n = (s.q_heads + 2 * s.kv_heads) * s.hd;
    // Top rows 1e15, not 1e17: the plain variant's heads (scaled up to 30 below) sum q² over hd
    // in fp32 and must stay below overflow in the standard computation too.
    const std::vector<double> scales = row_scales(s.m, s.extreme, 1e15);
    const Matrix x = scale_rows(random_bf16(s.m, s.hidden, rng, 1.0), scales);
    Matrix w_qkv = random_bf16(n, s.hidden, rng, 0.03);
    // Heads of very different scale (3e-3 … 30): the per-head norm must undo each.
    for (int r = 0; r < n; ++r) {
      const double scale = std::pow(10.0, double((r / s.hd) % 5) - 3.0) * 30.0 / 10.0;
      for (int k = 0; k < s.hidden; ++k) w_qkv(r, k) = ref::round_to_bf16(w_qkv(r, k) * scale);
    }
    const std::vector<double> gamma = random_norm_weight(s.hidden, rng);
    const std::vector<double> gamma_q = random_norm_weight(s.hd, rng), gamma_k = random_norm_weight(s.hd, rng);
    std::vector<std::int64_t> pos(s.m);
    std::uniform_int_distribution<std::int64_t> start(100000, 1000000);
    for (int m = 0, p = int(start(rng)); m < s.m; ++m, ++p) {
      if (m % 300 == 299) p = 0;
      pos[m] = p;
    }
    std::vector<std::int64_t> rows = rope_interleave_rows(rotated_heads, s.hd);
    for (int r = rotated_heads * s.hd; r < n; ++r) rows.push_back(r);
    const std::vector<std::int64_t> head_rows = rope_interleave_rows(1, s.hd);
    std::vector<double> gq_perm(s.hd), gk_perm(s.hd);
    for (int i = 0; i < s.hd; ++i) gq_perm[i] = gamma_q[head_rows[i]], gk_perm[i] = gamma_k[head_rows[i]];
    // The reference's own frequencies; the library's table only as the kernels' input.
    const std::vector<double> inv = ref::rope_inverse_frequencies(s.hd, 1000000.0);
    const std::vector<float> table = rope_frequencies(s.q_heads, s.kv_heads, s.hd, 1000000.0);

    // Standard (Qwen3): [RMSNorm →] q/k/v projection → per-head q_norm / k_norm → rotate-half RoPE.
    auto standard64 = [&](const Matrix& in) {
      return ref::permute_cols(ref::rope_rotate_half(ref::qk_norm(linear64(in, w_qkv), s.q_heads, s.kv_heads, s.hd,
                                                                  gamma_q, gamma_k, 1e-6),
                                                     pos, inv, rotated_heads, s.hd), rows);
    };
    auto standard_fw = [&](const Matrix& in) {
      return ref::permute_cols(ref::round_to_bf16(ref::rope_rotate_half(
          ref::qk_norm(linear_framework(in, w_qkv), s.q_heads, s.kv_heads, s.hd, gamma_q, gamma_k, 1e-6, true),
          pos, inv, rotated_heads, s.hd)), rows);
    };
    const Matrix normed64 = standard64(ref::rms_norm(x, gamma, kEps));
    const Matrix normed_fw = standard_fw(ref::rms_norm_framework(x, gamma, kEps));
    const Matrix plain64 = standard64(x), plain_fw = standard_fw(x);
    const Matrix pre64 = ref::permute_cols(linear64(ref::rms_norm(x, gamma, kEps), w_qkv), rows);
    const Matrix pre_fw = deferred_norm_framework(
        pre64, ref::permute_cols(linear_framework(ref::rms_norm_framework(x, gamma, kEps), w_qkv), rows), s.hidden);
    const Matrix pre_plain64 = ref::permute_cols(linear64(x, w_qkv), rows);
    const Matrix pre_plain_fw = ref::permute_cols(linear_framework(x, w_qkv), rows);

    DeviceMatrix d_x = upload(x), d_w = upload(ref::permute_rows(w_qkv, rows));
    DeviceBuffer d_gamma = upload_bf16_vector(gamma), d_gq = upload_bf16_vector(gq_perm),
                 d_gk = upload_bf16_vector(gk_perm), d_pos(s.m * 4), d_freq(table.size() * 4);
    d_pos.upload(std::vector<std::int32_t>(pos.begin(), pos.end()));
    d_freq.upload(table);
    const QkNorm qk{vector_view(d_gq, s.hd, DType::kBF16), vector_view(d_gk, s.hd, DType::kBF16),
                    s.q_heads, s.kv_heads, 1e-6f};
    const TensorView positions = vector_view(d_pos, s.m, DType::kI32),
                     frequencies = vector_view(d_freq, n, DType::kF32);
    // Per row scale and head: Pre and the V columns keep their head's scale (our column order
    // permutes within heads only).
    auto contract = [&](const std::vector<double>& got, const Matrix& r64, const Matrix& fw, const char* what) {
      return meets_contract_by_row_scale_and_head(got, r64.v, fw.v, scales, s.hd, what);
    };
    for (const OpOptions& options : kernel_choices(OpKey::kLinearQknormRope, s.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceMatrix h = output(s.m, s.hidden), qkv = output(s.m, n), qkv_plain = output(s.m, n);
      DeviceBuffer partials(norm_stats_floats(s.m, s.hidden) * 4);
      partials.poison();
      RowNormStats stats{partials.get<float>(), norm_stats_floats(s.m, s.hidden)};
      rms_norm_stats(h.view(), stats, d_x.view(), vector_view(d_gamma, s.hidden, DType::kBF16));
      linear_rmsnorm_qknorm_rope(qkv.view(), TensorView{}, h.view(), d_w.view(), stats, float(kEps),
                                 positions, frequencies, qk, nullptr,
                                 for_op(options, OpKey::kLinearRmsnormQknormRope));
      linear_qknorm_rope(qkv_plain.view(), TensorView{}, d_x.view(), d_w.view(), positions, frequencies, qk,
                         nullptr, options);
      // Training: the same outputs, and the projection before the norm saved for the backward.
      DeviceMatrix qkv_saving = output(s.m, n), pre = output(s.m, n), qkv_plain_saving = output(s.m, n),
                   pre_plain = output(s.m, n);
      linear_rmsnorm_qknorm_rope(qkv_saving.view(), pre.view(), h.view(), d_w.view(), stats,
                                 float(kEps), positions, frequencies, qk, nullptr,
                                 for_op(options, OpKey::kLinearRmsnormQknormRopeSavePre));
      linear_qknorm_rope(qkv_plain_saving.view(), pre_plain.view(), d_x.view(), d_w.view(), positions,
                         frequencies, qk, nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool pad[2];
      EXPECT_TRUE(contract(download(qkv, &pad[0]).v, normed64, normed_fw, "RoPE(QkNorm(RMSNorm(X)·W_qkvᵀ))"));
      EXPECT_TRUE(contract(download(qkv_plain, &pad[1]).v, plain64, plain_fw, "RoPE(QkNorm(X·W_qkvᵀ))"));
      for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
      bool save_pad[4];
      EXPECT_EQ(download(qkv_saving, &save_pad[0]).v, download(qkv, &pad[0]).v) << "saving Pre: same QKV bits";
      EXPECT_EQ(download(qkv_plain_saving, &save_pad[1]).v, download(qkv_plain, &pad[1]).v);
      EXPECT_TRUE(contract(download(pre, &save_pad[2]).v, pre64, pre_fw, "Pre = RMSNorm(X)·W_qkvᵀ"));
      EXPECT_TRUE(contract(download(pre_plain, &save_pad[3]).v, pre_plain64, pre_plain_fw, "Pre = X·W_qkvᵀ"));
      for (bool p : save_pad) EXPECT_TRUE(p) << "row padding written";
    }
  }
}

// The GPT-2 / BERT MLP up-projection, Y = GELU_tanh(X·Wᵀ + b) and Pre = X·Wᵀ + b, against the
// float64 standard (PyTorch's F.gelu(F.linear(x, w, b), approximate="tanh"); reference/epilogue.hpp
// writes the tanh form, the kernel the σ form). The framework is that call in bf16: addmm adds the
// bias in the GEMM's fp32 epilogue and rounds once (cuBLASLt's bias epilogue, or β = 1 on the
// broadcast bias: either way one rounding), then GELU in fp32 on the bf16 Pre, rounded. Rows of X
// of scale 1, 1e-20 (Pre = b), 1e-3 and 100 (GELU saturated: y = P or 0), the contract per row
// scale; GPT-2's 768 → 3072, ragged N (N % 8 ≠ 0), K = 1; Y with and without Pre stored (the same
// bits); under the op's own kernel choice and both forced configs (kernel_choices).
TEST(ForwardOps, BiasGeluAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("ForwardOps.BiasGeluAgainstStandard"));
  struct Shape {
    int m, k, n;
    bool extreme;
  };
  const Shape shapes[] = {{1, 520, 776, false},   {199, 768, 3072, false}, {1000, 776, 1000, true},
                          {16383, 264, 520, true}, {130, 1, 77, true}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " k " + std::to_string(s.k) + " n " + std::to_string(s.n));
    const std::vector<double> scales = row_scales(s.m, s.extreme, 100.0);
    const Matrix x = scale_rows(random_bf16(s.m, s.k, rng, 1.0), scales);
    const Matrix w = random_bf16(s.n, s.k, rng, 1.0 / std::sqrt(double(s.k)));
    std::vector<double> b(s.n);
    for (double& v : b) v = ref::round_to_bf16(float(std::normal_distribution<double>(0.0, 0.5)(rng)));

    const Matrix pre64 = ref::add_per_col(linear64(x, w), b), y64 = ref::gelu_tanh(pre64);
    const std::vector<float> acc = testing::gemm_cublas_f32(s.m, s.n, s.k, as_floats(x), as_floats(w));
    Matrix pre_fw(s.m, s.n);
    for (std::size_t i = 0; i < acc.size(); ++i) pre_fw.v[i] = ref::round_to_bf16(acc[i] + float(b[i % s.n]));
    const Matrix y_fw = ref::round_to_bf16(ref::gelu_tanh(pre_fw));

    DeviceMatrix d_x = upload(x), d_w = upload(w);
    DeviceBuffer d_b = upload_bf16_vector(b);
    const TensorView bias = vector_view(d_b, s.n, DType::kBF16);
    auto contract = [&](const std::vector<double>& got, const Matrix& r64, const Matrix& fw, const char* what) {
      return meets_contract_by_row_scale(got, r64.v, fw.v, scales, what);
    };
    for (const OpOptions& options : kernel_choices(OpKey::kLinearBiasGelu, s.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceMatrix y = output(s.m, s.n), y_saving = output(s.m, s.n), pre = output(s.m, s.n);
      linear_bias_gelu(y.view(), TensorView{}, d_x.view(), d_w.view(), bias, nullptr, options);
      linear_bias_gelu(y_saving.view(), pre.view(), d_x.view(), d_w.view(), bias, nullptr, options);
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool pad[3];
      const Matrix got = download(y, &pad[0]);
      EXPECT_TRUE(contract(got.v, y64, y_fw, "Y = GELU_tanh(X·Wᵀ + b)"));
      EXPECT_TRUE(contract(download(pre, &pad[1]).v, pre64, pre_fw, "Pre = X·Wᵀ + b"));
      EXPECT_EQ(download(y_saving, &pad[2]).v, got.v) << "saving Pre: same Y bits";
      for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
    }
  }
}

// The loss-only LM head + cross-entropy against the float64 standard: logits = X·Wᵀ, lse, per-row
// loss, sum and mean over non-ignored tokens, with a ragged vocabulary (V = 32777), ignored rows,
// an all-ignored batch (mean NaN, sum 0, as PyTorch), int32 and int64 targets, a z-loss, K = 1;
// under the op's own kernel choice and both forced configs.
TEST(ForwardOps, CrossEntropyAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("ForwardOps.CrossEntropyAgainstStandard"));
  struct Case {
    int m, hidden, vocab;
    bool int64;
    float z_loss;
    bool all_ignored;
    float softcap;
    bool extreme;  // rows of X of RMS 1e-20 … 1e17 (logits up to ~1e18)
  };
  const Case cases[] = {{1, 520, 32777, false, 0.0f, true, 0.0f, false},
                        {199, 520, 32777, true, 1e-4f, false, 30.0f, true},
                        {1000, 776, 32777, false, 0.0f, false, 0.0f, true},
                        {333, 2048, 4099, true, 0.0f, false, 3.0f, false},
                        {16383, 520, 4099, false, 1e-4f, false, 0.0f, true},
                        {33, 8192, 4099, true, 0.0f, false, 0.0f, true},
                        {130, 1, 4099, false, 0.0f, false, 0.0f, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE("m " + std::to_string(c.m) + " V " + std::to_string(c.vocab) + " softcap " +
                 std::to_string(c.softcap));
    const std::vector<double> scales = row_scales(c.m, c.extreme, 1e17);
    const Matrix x = scale_rows(random_bf16(c.m, c.hidden, rng, 1.0), scales);
    const Matrix w = random_bf16(c.vocab, c.hidden, rng, 2.0 / std::sqrt(double(c.hidden)));
    std::vector<std::int64_t> targets(c.m);
    std::uniform_int_distribution<std::int64_t> col(0, c.vocab - 1);
    for (int m = 0; m < c.m; ++m) targets[m] = c.all_ignored || m % 7 == 3 ? -100 : col(rng);
    // Gemma 2's soft-cap c · tanh(logits / c) on the logits (the framework's rounded to bf16).
    auto softcap = [&](Matrix logits, bool framework) {
      if (c.softcap > 0.0f)
        for (double& v : logits.v) {
          v = c.softcap * std::tanh(v / c.softcap);
          if (framework) v = ref::round_to_bf16(v);
        }
      return logits;
    };
    const Matrix logits64 = softcap(linear64(x, w), false), logits_fw = softcap(linear_framework(x, w), true);

    // Standard cross-entropy (float64 over the exact logits; the framework's over bf16 logits).
    auto cross_entropy = [&](const Matrix& logits, std::vector<double>* lse, std::vector<double>* row) {
      lse->assign(c.m, 0.0);
      row->assign(c.m, 0.0);
      for (int m = 0; m < c.m; ++m) {
        double max = -INFINITY, sum = 0.0;
        for (int v = 0; v < c.vocab; ++v) max = std::max(max, logits(m, v));
        for (int v = 0; v < c.vocab; ++v) sum += std::exp(logits(m, v) - max);
        (*lse)[m] = max + std::log(sum);
        if (targets[m] != -100)
          (*row)[m] = (*lse)[m] - logits(m, int(targets[m])) + c.z_loss * (*lse)[m] * (*lse)[m];
      }
    };
    std::vector<double> lse64, row64, lse_fw, row_fw;
    cross_entropy(logits64, &lse64, &row64);
    cross_entropy(logits_fw, &lse_fw, &row_fw);
    int counted = 0;
    for (auto t : targets) counted += t != -100;

    DeviceMatrix d_x = upload(x), d_w = upload(w);
    DeviceBuffer d_targets(c.m * 8);
    if (c.int64) d_targets.upload(targets);
    else d_targets.upload(std::vector<std::int32_t>(targets.begin(), targets.end()));
    const std::size_t ws_bytes = linear_cross_entropy_workspace_bytes(c.m, c.vocab);
    DeviceBuffer ws(ws_bytes);
    const TensorView t_view = vector_view(d_targets, c.m, c.int64 ? DType::kI64 : DType::kI32);
    CrossEntropyOptions ce;
    ce.z_loss = c.z_loss;
    ce.softcap = c.softcap;
    auto to_double = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
    for (const OpOptions& options : kernel_choices(OpKey::kLinearCrossEntropy, c.m)) {
      SCOPED_TRACE(describe_choice(options));
      DeviceBuffer loss_rows(c.m * 4), loss_sum(4), loss_mean(4), lse(c.m * 4);
      for (DeviceBuffer* b : {&loss_rows, &loss_sum, &loss_mean, &lse}) b->poison();
      for (Reduction r : {Reduction::kNone, Reduction::kSum, Reduction::kMean}) {
        ce.reduction = r;
        const DeviceBuffer& out = r == Reduction::kNone ? loss_rows : r == Reduction::kSum ? loss_sum : loss_mean;
        linear_cross_entropy(vector_view(out, r == Reduction::kNone ? c.m : 1, DType::kF32),
                             vector_view(lse, c.m, DType::kF32), d_x.view(), d_w.view(), t_view, ce,
                             ws.get(), ws_bytes, nullptr, options);
      }
      CODA_CHECK_CUDA(cudaDeviceSynchronize());

      EXPECT_TRUE(meets_contract_by_row_scale(to_double(lse.download<float>()), lse64, lse_fw, scales, "lse"));
      const std::vector<float> rows = loss_rows.download<float>();
      EXPECT_TRUE(meets_contract_by_row_scale(to_double(rows), row64, row_fw, scales, "loss per row"));
      const std::vector<float> lse_got = lse.download<float>();
      for (int m = 0, shown = 0; m < c.m; ++m) {
        if (targets[m] == -100) EXPECT_EQ(rows[m], 0.0f) << "ignored row " << m;
        else if (!std::isfinite(rows[m]) && shown++ < 3)
          ADD_FAILURE() << "row " << m << ": target " << targets[m] << ", lse " << lse_got[m]
                        << " (ref " << lse64[m] << "), implied target logit " << lse_got[m] - rows[m]
                        << " (ref " << logits64(m, int(targets[m])) << ")";
      }
      // The scalars against the per-token errors reduced (ignored rows are 0 on both sides).
      const float got_sum = loss_sum.download<float>()[0], got_mean = loss_mean.download<float>()[0];
      EXPECT_TRUE(meets_reduced_contract(got_sum, row64, row_fw, 1.0, "sum"));
      if (counted == 0) {
        EXPECT_TRUE(std::isnan(got_mean)) << "mean over no tokens is NaN, as PyTorch";
        EXPECT_EQ(got_sum, 0.0f);
      } else {
        EXPECT_TRUE(meets_reduced_contract(got_mean, row64, row_fw, 1.0 / counted, "mean"));
      }
    }
  }
}

// ce.validate_targets: a target outside [0, V) that is not ignore_index raises coda::Error naming
// its row and value before any output is written (int32 and int64, forward and fwd+bwd: loss, lse,
// dX, dW and zdz byte-identical to their poisoned state); valid targets give the same bits as
// without the check.
TEST(ForwardOps, CrossEntropyValidatesTargetsOnRequest) {
  std::mt19937_64 rng(testing::fresh_seed("ForwardOps.CrossEntropyValidatesTargetsOnRequest"));
  const int m = 300, hidden = 264, vocab = 1000;
  const Matrix x = random_bf16(m, hidden, rng, 1.0), w = random_bf16(vocab, hidden, rng, 0.1);
  std::vector<std::int64_t> targets(m);
  std::uniform_int_distribution<std::int64_t> col(0, vocab - 1);
  for (int r = 0; r < m; ++r) targets[r] = r % 5 == 2 ? -100 : col(rng);
  DeviceMatrix d_x = upload(x), d_w = upload(w), dx = output(m, hidden);
  DeviceBuffer t32(m * 4), t64(m * 8), loss(4), loss_checked(4), lse(m * 4),
      dw(std::size_t(vocab) * hidden * 4), zdz(m * 4);
  const std::size_t ws_bytes = std::max(linear_cross_entropy_workspace_bytes(m, vocab),
                                        linear_cross_entropy_fwd_bwd_workspace_bytes(m, vocab));
  DeviceBuffer ws(ws_bytes);
  auto upload_targets = [&] {
    t32.upload(std::vector<std::int32_t>(targets.begin(), targets.end()));
    t64.upload(targets);
  };
  upload_targets();
  CrossEntropyOptions ce, checked;
  checked.validate_targets = true;
  const TensorView t32_view = vector_view(t32, m, DType::kI32), t64_view = vector_view(t64, m, DType::kI64);
  linear_cross_entropy(vector_view(loss, 1, DType::kF32), vector_view(lse, m, DType::kF32), d_x.view(),
                       d_w.view(), t32_view, ce, ws.get(), ws_bytes);
  linear_cross_entropy(vector_view(loss_checked, 1, DType::kF32), vector_view(lse, m, DType::kF32),
                       d_x.view(), d_w.view(), t32_view, checked, ws.get(), ws_bytes);
  CODA_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(loss_checked.download<float>(), loss.download<float>()) << "valid targets: same bits";

  targets[37] = vocab;  // one past the vocabulary
  targets[201] = -5;
  upload_targets();
  const std::pair<DeviceBuffer*, const char*> outputs[] = {
      {&loss, "loss"}, {&lse, "lse"}, {&dx.buffer, "dX"}, {&dw, "dW"}, {&zdz, "zdz"}};
  for (const TensorView& t : {t32_view, t64_view}) {
    SCOPED_TRACE(t.dtype == DType::kI64 ? "int64" : "int32");
    for (const auto& [buffer, name] : outputs) buffer->poison();
    const std::string fwd = testing::error_of([&] {
      linear_cross_entropy(vector_view(loss, 1, DType::kF32), vector_view(lse, m, DType::kF32),
                           d_x.view(), d_w.view(), t, checked, ws.get(), ws_bytes);
    });
    EXPECT_EQ(fwd, "coda::ops::linear_cross_entropy: targets: row 37 has target 1000, neither "
                   "ignore_index (-100) nor in [0, V = 1000)");
    const CrossEntropyGrads grads{dx.view(), TensorView::matrix(dw.get(), DType::kF32, vocab, hidden),
                                  false, vector_view(zdz, m, DType::kF32)};
    const std::string fwd_bwd = testing::error_of([&] {
      linear_cross_entropy_fwd_bwd(vector_view(loss, 1, DType::kF32), vector_view(lse, m, DType::kF32),
                                   grads, d_x.view(), d_w.view(), t, checked, ws.get(), ws_bytes);
    });
    EXPECT_EQ(fwd_bwd, "coda::ops::linear_cross_entropy_fwd_bwd: targets: row 37 has target 1000, "
                       "neither ignore_index (-100) nor in [0, V = 1000)");
    CODA_CHECK_CUDA(cudaDeviceSynchronize());
    for (const auto& [buffer, name] : outputs)
      EXPECT_TRUE(testing::still_poisoned(*buffer)) << "nothing written: " << name << " changed";
  }
}

}  // namespace
}  // namespace coda::ops
