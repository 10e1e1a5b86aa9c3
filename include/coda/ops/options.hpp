// SPDX-License-Identifier: BSD-3-Clause
// OpOptions: what every fused op takes besides its tensors. Host-visible.
#pragma once

#include <optional>

#include "coda/gemm/config.hpp"

namespace coda::ops {

struct OpOptions {
  // The kernel for the op's GEMM. Unset: the op's tuned table (src/ops/op_table.inc, written by
  // `coda-bench tune-ops`), else the GEMM's own choice mapped onto the configs the fused programs
  // are compiled for. Set: must name one of those configs (Cooperative 128×256 2×1 or Pingpong
  // 128×128 2×1); raster and swizzle are free.
  std::optional<gemm::KernelChoice> choice;
};

}  // namespace coda::ops
