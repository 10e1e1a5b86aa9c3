// SPDX-License-Identifier: BSD-3-Clause
// The epilogue-program launchers reject bad input before touching CUDA, and the partial layouts.
#include <gtest/gtest.h>

#include "coda/epilogue/program_launchers.hpp"
#include "src/epilogue/example_launchers.hpp"
#include "coda/epilogue/merge.hpp"
#include "host/test_support.hpp"

namespace coda::epilogue {
namespace {

using coda::testing::error_of;
using gemm::TileConfig;

void* const kR = reinterpret_cast<void*>(0x50000);
float* const kP = reinterpret_cast<float*>(0x60000);

// A composed program's params are checked part by part, each pointer named by its path from
// `params` (the ParamChecks of program_launch.hpp), the statistic's part first.
TEST(ProgramLaunchers, ComposedParamsNameTheirPath) {
  auto A = TensorView::matrix(testing::kFakeA, DType::kBF16, 64, 64);
  auto B = TensorView::matrix(testing::kFakeB, DType::kBF16, 256, 64);
  auto D = TensorView::matrix(testing::kFakeD, DType::kBF16, 64, 256);
  const gemm::KernelChoice coop{TileConfig::kCoop128x256Cluster2x1};
  const RstdRowScaleParams rstd{{kP, {1, 64}, 64}, 1e-6f};
  const RopeRotateParams rope{reinterpret_cast<const std::int32_t*>(kP),
                              reinterpret_cast<const RopeFrequency*>(kP)};
  QkNormRopeParams qk{rope, kR, kR, 128, 192, 64, 1e-6f};
  RstdQkNormRopeSavePreParams p{rstd, {qk, kR, 256}};
  p.qk.qk.q_norm_weight = reinterpret_cast<const void*>(0x50002);
  EXPECT_EQ(error_of([&] { rstd_qk_norm_rope_save_pre(D, A, B, p, coop); }),
            "coda::epilogue::rstd_qk_norm_rope_save_pre: params.qk.qk.q_norm_weight: must be "
            "4-byte aligned");
  p.qk.qk.q_norm_weight = kR;
  p.qk.pre_stride = 250;
  EXPECT_NE(error_of([&] { rstd_qk_norm_rope_save_pre(D, A, B, p, coop); })
                .find("params.qk.pre: row stride must be >= N"),
            std::string::npos);
  p.qk.qk.rope.frequencies = nullptr;  // an earlier part fails first
  EXPECT_EQ(error_of([&] { rstd_qk_norm_rope_save_pre(D, A, B, p, coop); }),
            "coda::epilogue::rstd_qk_norm_rope_save_pre: params.qk.qk.rope.frequencies: data "
            "pointer is null");
  p.rstd.sums.layout.padded = 32;  // and the statistic before the rest
  EXPECT_EQ(error_of([&] { rstd_qk_norm_rope_save_pre(D, A, B, p, coop); }),
            "coda::epilogue::rstd_qk_norm_rope_save_pre: params.rstd.sums.layout: need tiles > 0 and "
            "padded >= M; got 1, 32");
  RstdSwiGluPairsNoDParams g{{rstd, {kR, 127}}};
  EXPECT_EQ(error_of([&] { rstd_swiglu_pairs_no_d(A, B, g, coop); }),
            "coda::epilogue::rstd_swiglu_pairs_no_d: params.gated.gated_stride: must be >= N/2 and "
            "even (4-byte pair stores); got 127");
}

TEST(ProgramLaunchers, RejectBeforeLaunch) {
  auto A = TensorView::matrix(testing::kFakeA, DType::kBF16, 64, 64);
  auto B = TensorView::matrix(testing::kFakeB, DType::kBF16, 32, 64);
  auto D = TensorView::matrix(testing::kFakeD, DType::kBF16, 64, 32);
  const gemm::KernelChoice coop{TileConfig::kCoop128x256Cluster2x1};

  ResidualRmsParams rr{nullptr, 32, kR, kR, 32, kP};
  EXPECT_EQ(error_of([&] { residual_rms(D, A, B, rr, coop); }),
            "coda::epilogue::residual_rms: params.residual: data pointer is null");
  rr.residual = kR;
  rr.normed_stride = 36;
  EXPECT_NE(error_of([&] { residual_rms(D, A, B, rr, coop); })
                .find("params.normed: row stride must be >= N and a multiple of 8 elements"),
            std::string::npos);

  RowScaleParams rs{nullptr, reinterpret_cast<const float*>(0x70002)};
  EXPECT_EQ(error_of([&] { row_scale(D, A, B, rs, coop); }),
            "coda::epilogue::row_scale: params.row_scale: must be 4-byte aligned");
  rs.row_scale = kP;
  auto Bn = TensorView::matrix_col_major(testing::kFakeB, DType::kBF16, 32, 64);
  EXPECT_EQ(error_of([&] { row_scale(D, A, Bn, rs, coop); }),
            "coda::epilogue::row_scale: A and B: this program is compiled for the AkBk operand "
            "layout (forward: K-major A and B); got AkBn");
  // The SwiGLU backward runs in a dgrad GEMM: the forward layout is refused.
  SwiGluBwdParams sb;
  sb.packed_z = sb.packed_dz = sb.zdz_partials = kP;
  sb.packed_z_stride = sb.packed_dz_stride = 32;
  EXPECT_EQ(error_of([&] { swiglu_bwd(D, A, B, sb, coop); }),
            "coda::epilogue::swiglu_bwd: A and B: this program is compiled for the AkBn operand "
            "layout (dgrad: K-major A, N-major B); got AkBk");
  // The GELU backward too; its forward checks the saved pre-activation's tile.
  const BiasGeluBwdParams gb{kR, 32, kP};
  EXPECT_EQ(error_of([&] { bias_gelu(D, A, B, gb, coop); }),
            "coda::epilogue::bias_gelu_bwd: A and B: this program is compiled for the AkBn operand "
            "layout (dgrad: K-major A, N-major B); got AkBk");
  EXPECT_NE(error_of([&] { bias_gelu(D, A, B, BiasGeluSavePreParams{{kR}, kR, 30}, coop); })
                .find("coda::epilogue::bias_gelu_save_pre: params.pre: row stride must be >= N"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { row_scale(D, A, B, rs, {TileConfig::kCoop128x256Cluster1x2}); }),
            "coda::epilogue::row_scale: choice.config: no coop_128x256_1x2 instance");
  auto D32 = TensorView::matrix(testing::kFakeD, DType::kF32, 64, 32);
  EXPECT_EQ(error_of([&] { row_scale(D32, A, B, rs, coop); }),
            "coda::epilogue::row_scale: D: the epilogue programs write bf16 D");

  BiasSiluColSumParams bs{kR, nullptr};
  EXPECT_EQ(error_of([&] { bias_silu_col_sum(D, A, B, bs, coop); }),
            "coda::epilogue::bias_silu_col_sum: params.col_partials: data pointer is null");
  EXPECT_TRUE(has_program_instance(ops::OpKey::kLinearRmsnorm, TileConfig::kPingpong128x128Cluster2x1));
  EXPECT_FALSE(has_program_instance(ops::OpKey::kLinearRmsnorm, TileConfig::kCoop256x128Cluster1x2));
}

// The configs each op's program is compiled for (scripts/instances.py): every program config,
// except that the QK-norm programs (whole 128-column heads per epilogue subtile) skip a tile N
// that 128 does not divide, and the ops whose output the framework rounds once from the fp32
// accumulator (the deferred-RMSNorm forward ops, rstd[m] · acc, the bias-GELU forward ones,
// acc + b, the residual RMSNorm's Σ (acc + R)², the SwiGLU and bias-GELU backwards' sums over
// their bf16 gradients) skip the overlapped Cooperative config, whose bf16 handoff rounds at
// another point.
TEST(ProgramLaunchers, EveryOpHasItsProgramConfigs) {
  for (int i = 0; i < int(ops::OpKey::kCount); ++i) {
    const auto op = ops::OpKey(i);
    const std::string name = ops::name(op);
    const bool whole_heads = name.find("qknorm") != std::string::npos;
    const bool needs_fp32_accumulator =
        name == "linear_residual_rms" || name == "linear_swiglu_bwd" ||
        name.rfind("linear_bias_gelu", 0) == 0 ||
        (name.rfind("linear_rmsnorm", 0) == 0 && name != "linear_rmsnorm_bwd");
    for (TileConfig c : kProgramConfigs) {
      const gemm::TileGeometry g = gemm::geometry(c);
      const bool bf16_handoff = c == TileConfig::kOverlapCoop128x256Cluster2x1;
      EXPECT_EQ(has_program_instance(op, c),
                (!whole_heads || g.tile_n % 128 == 0) && !(needs_fp32_accumulator && bf16_handoff))
          << name << " " << gemm::to_string(c);
    }
  }
}

TEST(ProgramLaunchers, PairAndOnlineProgramsRejectBeforeLaunch) {
  auto A = TensorView::matrix(testing::kFakeA, DType::kBF16, 64, 64);
  auto B = TensorView::matrix(testing::kFakeB, DType::kBF16, 32, 64);
  auto D = TensorView::matrix(testing::kFakeD, DType::kBF16, 64, 32);
  auto B_odd = TensorView::matrix(testing::kFakeB, DType::kBF16, 31, 64);
  auto D_odd = TensorView::matrix(testing::kFakeD, DType::kBF16, 64, 31, 32);
  const gemm::KernelChoice coop{TileConfig::kCoop128x256Cluster2x1};

  EXPECT_EQ(error_of([&] { swiglu_pairs(D_odd, A, B_odd, {kR, 16}, coop); }),
            "coda::epilogue::swiglu_pairs: N: must be even (the program works on column pairs); got 31");
  EXPECT_EQ(error_of([&] { swiglu_pairs(D, A, B, {kR, 17}, coop); }),
            "coda::epilogue::swiglu_pairs: params.gated_stride: must be >= N/2 and even (4-byte pair "
            "stores); got 17");
  EXPECT_EQ(error_of([&] { swiglu_pairs(D, A, B, {reinterpret_cast<void*>(0x50002), 16}, coop); }),
            "coda::epilogue::swiglu_pairs: params.gated: must be 4-byte aligned");

  const auto* freq = reinterpret_cast<const RopeFrequency*>(0x60000);
  EXPECT_EQ(error_of([&] { rope_rotate(D, A, B, {nullptr, freq}, coop); }),
            "coda::epilogue::rope_rotate: params.positions: data pointer is null");
  EXPECT_EQ(error_of([&] { rope_rotate(D_odd, A, B_odd, {reinterpret_cast<const std::int32_t*>(kP), freq}, coop); }),
            "coda::epilogue::rope_rotate: N: must be even (the program works on column pairs); got 31");

  EXPECT_NE(error_of([&] { swiglu_pairs_grad(D, A, B, {kR, 34, kR, 32}, coop); })
                .find("params.packed_z: row stride must be >= N and a multiple of 4 32-bit elements"),
            std::string::npos);

  RstdRowScaleParams leaf{{kP, {2, 128}, 0}, 1e-6f};
  EXPECT_EQ(error_of([&] { rstd_row_scale(D, A, B, leaf, coop); }),
            "coda::epilogue::rstd_row_scale: params.sums.width: must be positive");
  leaf.sums.width = 4096;
  leaf.sums.layout.padded = 63;
  EXPECT_NE(error_of([&] { rstd_row_scale(D, A, B, leaf, coop); }).find("padded >= M"),
            std::string::npos);

  CrossEntropyPartialsParams ce;
  ce.lse_partials = kP;
  ce.lse_padded = 64;  // the Cooperative tile pads M = 64 to 128
  EXPECT_EQ(error_of([&] { cross_entropy_partials(D, A, B, ce, coop); }),
            "coda::epilogue::cross_entropy_partials: params.lse_padded: must be "
            "per_row_partial_layout(choice.config, M, N).padded = 128; got 64");
  ce.lse_padded = 128;
  ce.targets = reinterpret_cast<const void*>(0x70004);
  ce.targets_int64 = true;
  ce.target_logits = kP;
  EXPECT_EQ(error_of([&] { cross_entropy_partials(D, A, B, ce, coop); }),
            "coda::epilogue::cross_entropy_partials: params.targets: must be 8-byte aligned");
}

TEST(PartialLayouts, TilesAndPadding) {
  PartialLayout rows = per_row_partial_layout(TileConfig::kCoop128x256Cluster2x1, 1000, 4095);
  EXPECT_EQ(rows.tiles, 16);     // ceil(4095 / 256)
  EXPECT_EQ(rows.padded, 1024);  // round_up(1000, 128)
  PartialLayout cols = per_col_partial_layout(TileConfig::kCoop256x128Cluster1x2, 1000, 4095);
  EXPECT_EQ(cols.tiles, 4);      // ceil(1000 / 256)
  EXPECT_EQ(cols.padded, 4096);  // round_up(4095, 128)
  EXPECT_EQ(cols.floats(), 4 * 4096);
}

// A workspace sized before the kernel is chosen (the *_any_config sizes) holds the partials of
// every config the programs are compiled for, at ragged and round extents.
TEST(PartialLayouts, AnyConfigHoldsEveryProgramConfig) {
  for (TileConfig config : kProgramConfigs)
    for (int m : {1, 127, 128, 129, 1000, 2048, 4095, 6225})
      for (int n : {1, 191, 192, 193, 2048, 3072, 4096, 4097, 14336}) {
        EXPECT_LE(per_row_partial_layout(config, m, n).floats(),
                  per_row_partial_floats_any_config(m, n))
            << gemm::to_string(config) << " " << m << "x" << n;
        EXPECT_LE(per_col_partial_layout(config, m, n).floats(),
                  per_col_partial_floats_any_config(m, n))
            << gemm::to_string(config) << " " << m << "x" << n;
      }
}

}  // namespace
}  // namespace coda::epilogue
