// SPDX-License-Identifier: BSD-3-Clause
// The GPUs the kernel tables are tuned on, and which of them a device is. A table tuned on one
// Hopper part is not the choice for another (an H200-tuned table left fused ops 1.2-1.9× slower
// on an H100), so every table lookup is keyed by the device in use. Host-visible.
#pragma once

#include <cstdint>

namespace coda::gemm {

// kUntuned: a GPU no table was tuned on; it gets the rules alone.
enum class TunedGpu : std::uint8_t { kUntuned, kH100, kH200 };

const char* to_string(TunedGpu gpu);

// From what the driver reports: a 132-SM part named H100 (SXM) or H200 (GH200 included);
// anything else — NVL or PCIe parts, other SM counts — is kUntuned.
TunedGpu tuned_gpu_from(const char* device_name, int sm_count);

// The current device's, queried once per device ordinal; kUntuned without a device.
TunedGpu current_tuned_gpu();

}  // namespace coda::gemm
