// SPDX-License-Identifier: BSD-3-Clause
// The CUDA-side checks every entry point runs after its host-only validation: the current device,
// and that each pointer the kernel touches is device (or managed) memory on it. Not stream
// operations, so they are allowed during graph capture.
#pragma once

#include "coda/tensor.hpp"

namespace coda {

// Throws coda::Error("<where>: <name>: is on device D but the current device is C").
void require_current_device(int device, const char* where, const char* name);

// Throws coda::Error("<where>: <name>: must be device memory on device D") (or "not a CUDA pointer").
void require_device_memory(const void* ptr, int device, const char* where, const char* name);

// The operands of a GEMM: D's device is current, and D, A, B live on it.
void require_gemm_operands_on_device(const TensorView& D, const TensorView& A, const TensorView& B,
                                     const char* where);

// Validate once: while one is alive on this thread, the checks above return at once. An op sets
// one around its launches after it has run them itself for every pointer it hands to the layers
// below (ops::detail::require_memory, under the op's own argument names), so the epilogue
// launchers and the plain GEMM it calls do not query the driver for the same pointers again.
class DeviceChecksDone {
 public:
  DeviceChecksDone();
  ~DeviceChecksDone();
  DeviceChecksDone(const DeviceChecksDone&) = delete;
  DeviceChecksDone& operator=(const DeviceChecksDone&) = delete;
  static bool active();

 private:
  bool outer_;  // what it was before: guards nest
};

}  // namespace coda
