// SPDX-License-Identifier: BSD-3-Clause
// Device test main: exits 77 (ctest: skipped, never passed) when no Hopper GPU is present.
#include <cstdio>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("coda_device_tests: no CUDA device; skipped\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  if (prop.major != 9) {
    std::printf("coda_device_tests: %s is sm_%d%d, not Hopper (sm_90a); skipped\n", prop.name,
                prop.major, prop.minor);
    return 77;
  }
  std::printf("coda_device_tests on %s\n", prop.name);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
