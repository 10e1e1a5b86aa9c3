// SPDX-License-Identifier: BSD-3-Clause
// What every program header uses. The programs come one family per header (kernels/coda/programs/),
// and a kernel unit includes only its program's family header, so an edit to one program rebuilds
// only that family's units. Device-side (CUTLASS).
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cutlass/bfloat16.h>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

#include "coda/epilogue/broadcast.hpp"
#include "coda/epilogue/composition.hpp"
#include "coda/epilogue/elementwise.hpp"
#include "coda/epilogue/program_params.hpp"
#include "coda/epilogue/tile.hpp"
#include "coda/gemm/config.hpp"

namespace coda::epilogue {

using bf16 = cutlass::bfloat16_t;

// How a program is compiled, declared on one line after it (at the start of the line):
//   CODA_COMPILE_PROGRAM(Program, Layout, ElementD);  its kernels ship in libcoda
//   CODA_COMPILE_EXAMPLE(Program, Layout, ElementD);  a composition no op uses: built into the
//                                                     coda_examples library (tests, coda-bench)
// Layout: the operand layout it runs in (kAkBk forward, kAkBn dgrad, kAmBn wgrad; config.hpp).
// ElementD: bf16, float (fp32 accumulation: the Cooperative config only) or void (no D stored).
// scripts/instances.py reads these lines to generate the kernel units and the dispatch list; each
// generated unit static_asserts that what it read is this Compiled<Program>, so the host's
// dispatch and the compiled kernel cannot disagree.
template <class Program>
struct Compiled;

#define CODA_COMPILE_PROGRAM(Program, Layout, ElementD)                             \
  template <>                                                                       \
  struct Compiled<Program> {                                                        \
    static constexpr gemm::OperandLayout kLayout = gemm::OperandLayout::Layout;     \
    using D = ElementD;                                                             \
  }
#define CODA_COMPILE_EXAMPLE(Program, Layout, ElementD) \
  CODA_COMPILE_PROGRAM(Program, Layout, ElementD)

}  // namespace coda::epilogue
