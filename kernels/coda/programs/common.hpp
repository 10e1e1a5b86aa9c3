// SPDX-License-Identifier: BSD-3-Clause
// What every program header uses. The programs come one family per header (kernels/coda/programs/),
// and a kernel unit includes only its program's family (scripts/instances.py, PROGRAM_HEADERS), so
// an edit to one program rebuilds only that family's units. Device-side (CUTLASS).
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cutlass/bfloat16.h>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

#include "coda/epilogue/broadcast.hpp"
#include "coda/epilogue/composition.hpp"
#include "coda/epilogue/elementwise.hpp"
#include "coda/epilogue/program_params.hpp"
#include "coda/epilogue/tile.hpp"

namespace coda::epilogue {

using bf16 = cutlass::bfloat16_t;

}  // namespace coda::epilogue
