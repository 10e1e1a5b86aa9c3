// SPDX-License-Identifier: BSD-3-Clause
// Validate once: DeviceChecksDone turns the CUDA-side checks off for its scope on its thread only,
// nests, and ends with its scope (an exception included). A host pointer is never device memory,
// with or without a GPU, so each check below fails unless a guard is alive.
#include <gtest/gtest.h>

#include <thread>

#include "coda/device_check.hpp"
#include "host/test_support.hpp"

namespace coda {
namespace {

using testing::error_of;

std::string check_host_pointer() {
  static int host_value = 0;
  return error_of([] { require_device_memory(&host_value, 0, "test", "p"); });
}

TEST(DeviceChecksDone, SkipsTheChecksOnlyInItsScopeAndThread) {
  EXPECT_NE(check_host_pointer(), "");
  EXPECT_FALSE(DeviceChecksDone::active());
  {
    const DeviceChecksDone outer;
    EXPECT_EQ(check_host_pointer(), "");
    EXPECT_EQ(error_of([] { require_current_device(7, "test", "p"); }), "");
    {
      const DeviceChecksDone inner;
      EXPECT_EQ(check_host_pointer(), "");
    }
    EXPECT_TRUE(DeviceChecksDone::active()) << "an inner guard ended the outer one";
    std::string other_thread;
    std::thread([&] { other_thread = check_host_pointer(); }).join();
    EXPECT_NE(other_thread, "") << "a guard leaked to another thread";
  }
  EXPECT_FALSE(DeviceChecksDone::active());
  EXPECT_NE(check_host_pointer(), "");
  try {
    const DeviceChecksDone guard;
    throw Error("thrown inside");
  } catch (const Error&) {
  }
  EXPECT_FALSE(DeviceChecksDone::active()) << "an exception left the checks off";
}

}  // namespace
}  // namespace coda
