// SPDX-License-Identifier: BSD-3-Clause
// The example-program launchers reject bad input before touching CUDA, and the partial layouts.
#include <gtest/gtest.h>

#include "coda/epilogue/example_instances.hpp"
#include "coda/epilogue/merge.hpp"
#include "host/test_support.hpp"

namespace coda::epilogue {
namespace {

using coda::testing::error_of;
using gemm::TileConfig;

void* const kR = reinterpret_cast<void*>(0x50000);
float* const kP = reinterpret_cast<float*>(0x60000);

TEST(ExampleLaunchers, RejectBeforeLaunch) {
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
  EXPECT_NE(error_of([&] { row_scale(D, A, Bn, rs, coop); })
                .find("compiled for K-major A and B"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { row_scale(D, A, B, rs, {TileConfig::kCoop128x256Cluster1x2}); }),
            "coda::epilogue::row_scale: choice.config: no coop_128x256_1x2 instance");
  auto D32 = TensorView::matrix(testing::kFakeD, DType::kF32, 64, 32);
  EXPECT_EQ(error_of([&] { row_scale(D32, A, B, rs, coop); }),
            "coda::epilogue::row_scale: D: the example programs write bf16 D");

  BiasSiluColSumParams bs{kR, nullptr};
  EXPECT_EQ(error_of([&] { bias_silu_col_sum(D, A, B, bs, coop); }),
            "coda::epilogue::bias_silu_col_sum: params.col_partials: data pointer is null");
  EXPECT_TRUE(has_example_instance(TileConfig::kPingpong128x128Cluster2x1));
  EXPECT_FALSE(has_example_instance(TileConfig::kCoop256x128Cluster1x2));
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

}  // namespace
}  // namespace coda::epilogue
