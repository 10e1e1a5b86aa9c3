// SPDX-License-Identifier: BSD-3-Clause
// The public entry point rejects bad input before it touches CUDA (so this runs without a GPU).
#include <gtest/gtest.h>

#include "coda/gemm/gemm.hpp"
#include "host/test_support.hpp"

namespace coda::gemm {
namespace {

using testing::error_of;

void* const kA = testing::kFakeA;
void* const kB = testing::kFakeB;
void* const kD = testing::kFakeD;

TEST(GemmApi, RejectsBeforeLaunch) {
  auto A = TensorView::matrix(kA, DType::kBF16, 64, 64);
  auto B = TensorView::matrix(kB, DType::kBF16, 64, 64);
  auto D = TensorView::matrix(kD, DType::kBF16, 64, 64);
  auto bad_a = TensorView::matrix(kA, DType::kF16, 64, 64);
  EXPECT_EQ(error_of([&] { gemm(D, bad_a, B); }), "coda::gemm: A: dtype must be bf16; got f16");

  GemmOptions swizzle;
  swizzle.choice = KernelChoice{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongM, 3,
                                Decomposition::kHeuristic};
  EXPECT_EQ(error_of([&] { gemm(D, A, B, swizzle); }),
            "coda::gemm: options.choice.swizzle must be 1, 2, 4 or 8; got 3");

  GemmOptions missing;
  missing.choice = KernelChoice{TileConfig::kPingpong128x128Cluster2x1};
  auto D32 = TensorView::matrix(kD, DType::kF32, 64, 64);
  EXPECT_NE(error_of([&] { gemm(D32, A, B, missing); })
                .find("options.choice.config: no pingpong_128x128_2x1 kernel for AkBk operands "
                      "with f32 D is compiled in"),
            std::string::npos);

  GemmOptions alpha;
  alpha.alpha = reinterpret_cast<const float*>(0x40002);
  EXPECT_EQ(error_of([&] { gemm(D, A, B, alpha); }),
            "coda::gemm: options.alpha: must be 4-byte aligned");
  EXPECT_EQ(error_of([&] { workspace_bytes(D, A, B, alpha); }),
            "coda::gemm: options.alpha: must be 4-byte aligned");
}

}  // namespace
}  // namespace coda::gemm
