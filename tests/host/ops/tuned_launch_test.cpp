// SPDX-License-Identifier: BSD-3-Clause
// How an op launches (detail::launch_tuned) when no timing is asked for, on the CPU: with the
// autotuner off, or with options.choice set, the op's launches run exactly once with the choice
// it made, and inside them the CUDA-side pointer checks are off (the op ran them: validate once),
// on again afterwards — also when a launch throws. A choice forced on an op for a benchmark
// (force_op_choice) is used like options.choice, on that op and thread only.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "coda/device_check.hpp"
#include "coda/epilogue/merge.hpp"
#include "coda/ops/autotune.hpp"
#include "coda/ops/linear_norm.hpp"
#include "coda/status.hpp"
#include "src/ops/op_checks.hpp"
#include "src/ops/tuned_launch.hpp"

namespace coda::ops::detail {
namespace {

using gemm::KernelChoice;
using gemm::RasterOrder;
using gemm::TileConfig;

const KernelChoice kRule{TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 2};

struct Recorder {
  std::vector<KernelChoice> ran;
  std::vector<bool> checks_done;
  OpLaunch launch() {
    return [this](const KernelChoice& c) {
      ran.push_back(c);
      checks_done.push_back(DeviceChecksDone::active());
    };
  }
};

TEST(LaunchTuned, TunerOffRunsTheRuleOnceWithTheChecksDone) {
  set_autotune(false);
  Recorder r;
  const KernelChoice got =
      launch_tuned({OpKey::kLinearSwiglu, 300, 776, 520}, OpOptions{}, kRule, nullptr, r.launch());
  EXPECT_EQ(got, kRule);
  ASSERT_EQ(r.ran.size(), 1u);
  EXPECT_EQ(r.ran[0], kRule);
  EXPECT_TRUE(r.checks_done[0]) << "the layers below re-check what the op checked";
  EXPECT_FALSE(DeviceChecksDone::active()) << "the checks stay off after the op";
}

TEST(LaunchTuned, AForcedChoiceIsNeverTimed) {
  set_autotune(true);
  const KernelChoice forced{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongM, 8};
  Recorder r;
  const KernelChoice got = launch_tuned({OpKey::kLinearRmsnormBwd, 300, 520, 776},
                                        OpOptions{forced}, forced, nullptr, r.launch());
  set_autotune(false);
  EXPECT_EQ(got, forced);
  ASSERT_EQ(r.ran.size(), 1u) << "a call with options.choice ran more than once";
  EXPECT_EQ(r.ran[0], forced);
}

TEST(ForcedOpChoice, RunsOnceUntimedOnItsOpAndThreadOnly) {
  const KernelChoice forced{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongM, 4};
  force_op_choice(OpKey::kLinearSwiglu, forced);
  EXPECT_EQ(forced_op_choice(OpKey::kLinearSwiglu), forced);
  EXPECT_FALSE(forced_op_choice(OpKey::kLinearRope)) << "forcing one op forced another";
  std::optional<KernelChoice> seen_elsewhere = forced;
  std::thread([&] { seen_elsewhere = forced_op_choice(OpKey::kLinearSwiglu); }).join();
  EXPECT_FALSE(seen_elsewhere) << "a forced choice leaked to another thread";

  set_autotune(true);  // the autotuner must not time a forced op
  Recorder r;
  const KernelChoice got =
      launch_tuned({OpKey::kLinearSwiglu, 300, 776, 520}, OpOptions{}, forced, nullptr, r.launch());
  set_autotune(false);
  force_op_choice(OpKey::kLinearSwiglu, std::nullopt);
  EXPECT_EQ(got, forced);
  ASSERT_EQ(r.ran.size(), 1u) << "a forced op was timed";
  EXPECT_EQ(r.ran[0], forced);
  EXPECT_FALSE(forced_op_choice(OpKey::kLinearSwiglu)) << "nullopt did not clear it";
}

// What an op last ran is recorded per op and thread (last_op_choice), forced or not.
TEST(LastOpChoice, RecordsWhatRanOnItsOpAndThreadOnly) {
  set_autotune(false);
  Recorder r;
  launch_tuned({OpKey::kLinearRope, 300, 776, 520}, OpOptions{}, kRule, nullptr, r.launch());
  EXPECT_EQ(last_op_choice(OpKey::kLinearRope), kRule);
  const KernelChoice forced{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongM, 4};
  force_op_choice(OpKey::kLinearRope, forced);
  launch_tuned({OpKey::kLinearRope, 300, 776, 520}, OpOptions{}, forced, nullptr, r.launch());
  force_op_choice(OpKey::kLinearRope, std::nullopt);
  EXPECT_EQ(last_op_choice(OpKey::kLinearRope), forced);
  EXPECT_FALSE(last_op_choice(OpKey::kLinearBiasGeluBwd)) << "an op that never ran";
  std::optional<KernelChoice> seen_elsewhere = forced;
  std::thread([&] { seen_elsewhere = last_op_choice(OpKey::kLinearRope); }).join();
  EXPECT_FALSE(seen_elsewhere) << "the record leaked to another thread";
}

// The producer's statistics layout follows a forced kernel (program_choice, host-only): a
// benchmark that forces linear_residual_rms's kernel gets the layout that kernel writes.
TEST(ForcedOpChoice, DecidesTheProducersStatsLayout) {
  const std::int64_t m = 1000, n = 2048, k = 2048;
  for (TileConfig config : {TileConfig::kCoop128x256Cluster2x1, TileConfig::kPingpong128x128Cluster2x1}) {
    force_op_choice(OpKey::kLinearResidualRms, KernelChoice{config, RasterOrder::kAlongN, 1});
    const epilogue::PartialLayout got = linear_residual_rms_stats_layout(m, n, k);
    const epilogue::PartialLayout want = epilogue::per_row_partial_layout(config, int(m), int(n));
    EXPECT_EQ(got.tiles, want.tiles) << gemm::to_string(config);
    EXPECT_EQ(got.padded, want.padded) << gemm::to_string(config);
  }
  // A config the fused programs are not compiled for is refused, naming the constraint.
  force_op_choice(OpKey::kLinearResidualRms,
                  KernelChoice{TileConfig::kCoop256x128Cluster1x2, RasterOrder::kAlongN, 1});
  try {
    linear_residual_rms_stats_layout(m, n, k);
    ADD_FAILURE() << "a forced config outside the programs' was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("options.choice.config"), std::string::npos) << e.what();
  }
  force_op_choice(OpKey::kLinearResidualRms, std::nullopt);
}

// A fused op's rule (no table on this host) gets a swizzle that fits its tile grid; a forced
// choice runs as given (a benchmark times exactly the candidate it names).
TEST(ProgramChoice, TheRulesSwizzleFitsTheGrid) {
  const ArgCheck check("program_choice test");
  // K >= 8192: Cooperative 128 × 256, along N, swizzle 4. N = 5 columns of 256: swizzle 4 would
  // schedule 8 columns, swizzle 2 six, swizzle 1 five.
  const TunedCall call{OpKey::kLinearSwiglu, 8192, 5 * 256, 8192};
  EXPECT_EQ(forward_program_rule(call.m, call.n, call.k).swizzle, 4);
  EXPECT_EQ(program_choice(check, call, OpOptions{}).swizzle, 1);
  EXPECT_EQ(program_choice(check, {OpKey::kLinearSwiglu, 8192, 64 * 256, 8192}, OpOptions{}).swizzle, 4);
  const KernelChoice forced{TileConfig::kCoop128x256Cluster2x1, RasterOrder::kAlongN, 8};
  force_op_choice(OpKey::kLinearSwiglu, forced);
  EXPECT_EQ(program_choice(check, call, OpOptions{}), forced);
  force_op_choice(OpKey::kLinearSwiglu, std::nullopt);
}

TEST(LaunchTuned, ALaunchThatThrowsLeavesTheChecksOn) {
  set_autotune(false);
  EXPECT_THROW(launch_tuned({OpKey::kLinearRope, 1, 512, 64}, OpOptions{}, kRule, nullptr,
                            [](const KernelChoice&) { throw Error("launch failed"); }),
               Error);
  EXPECT_FALSE(DeviceChecksDone::active());
}

}  // namespace
}  // namespace coda::ops::detail
