// SPDX-License-Identifier: BSD-3-Clause
// The forward fused ops' rule for shapes no table row is near (detail::forward_program_rule): at
// every K it picks a kernel the programs are compiled for and the autotuner can time against it,
// and it trades the epilogue's overlap (Pingpong) for the mainloop's operand traffic (Cooperative)
// once, as K grows (docs/design.md §10.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "coda/epilogue/program_launchers.hpp"
#include "coda/ops/autotune.hpp"
#include "src/ops/op_checks.hpp"

namespace coda::ops::detail {
namespace {

TEST(ForwardProgramRule, PicksACompiledCandidateAtEveryK) {
  const auto& candidates = program_candidates();
  for (std::int64_t k : {1, 8, 64, 2048, 4096, 8191, 8192, 16384, 57344, 1 << 20}) {
    SCOPED_TRACE(k);
    const gemm::KernelChoice c = forward_program_rule(k);
    EXPECT_TRUE(epilogue::has_program_instance(c.config));
    EXPECT_EQ(c.decomposition, gemm::Decomposition::kHeuristic);
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), c), candidates.end())
        << "the rule must be one of the autotuner's candidates, which it is timed against";
  }
}

TEST(ForwardProgramRule, SwitchesFromPingpongToCooperativeOnceAsKGrows) {
  bool cooperative = false;
  int switches = 0;
  for (std::int64_t k = 64; k <= (1 << 17); k += 64) {
    const bool coop = forward_program_rule(k).config == gemm::TileConfig::kCoop128x256Cluster2x1;
    switches += coop != cooperative;
    cooperative = coop;
  }
  EXPECT_EQ(switches, 1);
  EXPECT_TRUE(cooperative) << "long K: the mainloop dominates, Cooperative's smaller traffic wins";
  EXPECT_EQ(forward_program_rule(64).config, gemm::TileConfig::kPingpong128x128Cluster2x1)
      << "short K: the epilogue's share is large, Pingpong hides it";
}

// The SwiGLU backward's own swizzle fit (swizzle_fit_of): a tuned swizzle survives the 2.1 %
// padding of M = 12000 (94 tile rows of 128 rounded to 96) but not the 4.8 % of M = 5194 (42 to
// 44), and a Pingpong choice then walks the shorter mode; every other op keeps the defaults.
TEST(SwizzleFit, SwigluBackwardKeepsItsSwizzleAtSmallPadding) {
  const gemm::KernelChoice tuned{gemm::TileConfig::kPingpong128x128Cluster2x1,
                                 gemm::RasterOrder::kAlongN, 8, gemm::Decomposition::kHeuristic};
  const gemm::SwizzleFit swiglu_bwd = swizzle_fit_of(OpKey::kLinearSwigluBwd);
  const gemm::KernelChoice at_12000 = gemm::fit_swizzle(tuned, 12000, 8192, swiglu_bwd);
  EXPECT_GT(at_12000.swizzle, 1);
  EXPECT_EQ(at_12000.raster, gemm::RasterOrder::kAlongN);
  const gemm::KernelChoice at_5194 = gemm::fit_swizzle(tuned, 5194, 8192, swiglu_bwd);
  EXPECT_EQ(at_5194.swizzle, 1);
  EXPECT_EQ(at_5194.raster, gemm::RasterOrder::kHeuristic);
  // The defaults: swizzle 1 at M = 12000, and a Pingpong choice keeps its raster.
  for (int i = 0; i < int(OpKey::kCount); ++i) {
    const OpKey op = OpKey(i);
    if (op == OpKey::kLinearSwigluBwd) continue;
    const gemm::KernelChoice c = gemm::fit_swizzle(tuned, 12000, 8192, swizzle_fit_of(op));
    EXPECT_EQ(c.swizzle, 1) << name(op);
    EXPECT_EQ(c.raster, gemm::RasterOrder::kAlongN) << name(op);
  }
}

}  // namespace
}  // namespace coda::ops::detail
