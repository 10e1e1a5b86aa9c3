// SPDX-License-Identifier: BSD-3-Clause
// How an op launches (detail::launch_tuned) when no timing is asked for, on the CPU: with the
// autotuner off, or with options.choice set, the op's launches run exactly once with the choice
// it made, and inside them the CUDA-side pointer checks are off (the op ran them: validate once),
// on again afterwards — also when a launch throws.
#include <gtest/gtest.h>

#include <vector>

#include "coda/device_check.hpp"
#include "coda/ops/autotune.hpp"
#include "coda/status.hpp"
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

TEST(LaunchTuned, ALaunchThatThrowsLeavesTheChecksOn) {
  set_autotune(false);
  EXPECT_THROW(launch_tuned({OpKey::kLinearRope, 1, 512, 64}, OpOptions{}, kRule, nullptr,
                            [](const KernelChoice&) { throw Error("launch failed"); }),
               Error);
  EXPECT_FALSE(DeviceChecksDone::active());
}

}  // namespace
}  // namespace coda::ops::detail
