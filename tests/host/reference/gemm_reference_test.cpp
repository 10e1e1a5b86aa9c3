// SPDX-License-Identifier: BSD-3-Clause
// The float64 reference and the framework model against direct formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/bf16.hpp"
#include "reference/gemm.hpp"

namespace coda::ref {
namespace {

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(round_to_bf16(1.0f), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even gives 1.
  EXPECT_EQ(round_to_bf16(1.0f + 0x1p-8f), 1.0f);
  // 1 + 3·2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even gives 1 + 2^-6.
  EXPECT_EQ(round_to_bf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
  EXPECT_EQ(round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 1.0f + 0x1p-7f);
  EXPECT_EQ(round_to_bf16(-2.5f), -2.5f);
  EXPECT_TRUE(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isinf(round_to_bf16(std::numeric_limits<float>::infinity())));
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
}

TEST(GemmReference, MatchesHandComputedProduct) {
  // A = [[1, 2, 3], [4, 5, 6]] row-major; B = [[1, 0, -1], [2, 1, 0]] stored column-major (N-major).
  const double a[] = {1, 2, 3, 4, 5, 6};
  const double b_cm[] = {1, 2, 0, 1, -1, 0};  // B(n, k) at n + 2k
  auto d = gemm_f64(2, 2, 3, {a, 3, 1}, {b_cm, 1, 2}, 0.5);
  // A·Bᵀ = [[1·1 + 3·(−1), 1·2 + 2·1], [4 − 6, 8 + 5]] = [[−2, 4], [−2, 13]], times 0.5.
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0], -1.0);
  EXPECT_EQ(d[1], 2.0);
  EXPECT_EQ(d[2], -1.0);
  EXPECT_EQ(d[3], 6.5);
}

TEST(GemmReference, FrameworkModelRoundsAndAccumulatesInFloat) {
  // Σ of 4097 ones in fp32 is exact; 1 + 2^-24·k stays 1 in fp32, so the framework model drifts
  // from float64 exactly as fp32 accumulation does.
  const int k = 3;
  const float a[] = {1.0f, 0x1p-25f, 0x1p-25f};
  const float b[] = {1.0f, 1.0f, 1.0f};
  const double ad[] = {1.0, 0x1p-25, 0x1p-25};
  const double bd[] = {1.0, 1.0, 1.0};
  auto fw = gemm_framework(1, 1, k, {a, k, 1}, {b, k, 1}, 1.0f, false);
  auto ref = gemm_f64(1, 1, k, {ad, k, 1}, {bd, k, 1});
  EXPECT_EQ(fw[0], 1.0);
  EXPECT_EQ(ref[0], 1.0 + 0x1p-24);
  EXPECT_DOUBLE_EQ(contract_tolerance(fw, ref), 2 * 0x1p-24 + 1e-6);
  auto fw_bf16 = gemm_framework(1, 1, 1, {a, 1, 1}, {b, 1, 1}, 1.0f + 0x1p-7f, true);
  EXPECT_EQ(fw_bf16[0], 1.0 + 0x1p-7);
}

}  // namespace
}  // namespace coda::ref
